import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// Items by row ID, with their details, in the request's order.
extension Search {
    /// Items by id, entity-filtered and, unless `checkingFilter` is false (rows the filter kept already),
    /// filtered; 500 per query.
    mutating func rows(ids: [Int64], checkingFilter: Bool = true) throws -> [Candidate] {
        let filter = checkingFilter ? entityFilter : entityOnlyFilter
        var candidates: [Candidate] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let sql = "SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude FROM items i WHERE i.id IN (\(databaseQuestionMarks(count: chunk.count)))\(filter.sql)"
            let arguments = StatementArguments(chunk) + filter.arguments
            if start == 0 { record(sql, arguments) }
            // Cached: a page's details are read with the same statement at every search.
            for row in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments) {
                candidates.append(Candidate(id: try row.integer(0), uri: try row.text(1), entity: try row.text(2), displayName: try row.text(3),
                                            latitude: try row.optionalNumber(4), longitude: try row.optionalNumber(5)))
            }
        }
        return candidates
    }

    /// Roughly how many items the index holds, in O(log n): the largest row id. Only starting
    /// radii and plan choices use it; counting the R-tree would scan it whole.
    func estimatedItemCount() throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT MAX(id) FROM items")) ?? 0
    }

    // MARK: Order

    /// The `k`-th smallest of `values` (1 ≤ k ≤ count, no NaN), in expected linear time: Hoare's
    /// selection, its pivot the median of three.
    static func smallest(_ k: Int, of values: [Double]) -> Double {
        var values = values
        let target = k - 1
        var low = 0, high = values.count - 1
        while low < high {
            let (a, b, c) = (values[low], values[(low + high) / 2], values[high])
            let pivot = max(min(a, b), min(max(a, b), c))
            var i = low, j = high
            while i <= j {
                while values[i] < pivot { i += 1 }
                while values[j] > pivot { j -= 1 }
                if i <= j {
                    values.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            // values[low...j] ≤ pivot ≤ values[i...high]; between them, the pivot's equals.
            if target <= j { high = j } else if target >= i { low = i } else { return values[target] }
        }
        return values[target]
    }

    /// Fills URI, entity and name of candidates that were read without them (place plans).
    mutating func withDetails(_ candidates: [Candidate]) throws -> [Candidate] {
        let missing = candidates.filter(\.uri.isEmpty).map(\.id)
        guard !missing.isEmpty else { return candidates }
        let details = Dictionary(try rows(ids: missing).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return candidates.map { candidate in
            guard candidate.uri.isEmpty, let row = details[candidate.id] else { return candidate }
            var filled = candidate
            (filled.uri, filled.entity, filled.displayName) = (row.uri, row.entity, row.displayName)
            return filled
        }
    }

    /// The requested page, best first, ties broken by URI. URIs are read only for the page and for
    /// the candidates tied with its first or last entry: that is all the tie-break needs.
    mutating func ordered(_ candidates: consuming [Candidate]) throws -> [Candidate] {
        // Candidates read with their URIs (every hit within a radius) are sorted once, ties by URI.
        if candidates.allSatisfy({ !$0.uri.isEmpty }) { return request.page(of: candidates) }
        // Positions are sorted, by keys computed once (see `SearchRequest.page(of:)`); of many candidates,
        // only those up to the page's last key (ties included) are.
        let keys = candidates.map(request.orderKey)
        var kept = Array(candidates.indices)
        if needed < candidates.count / 4, !keys.contains(where: \.isNaN) {
            let last = Self.smallest(needed, of: keys)
            kept.removeAll { keys[$0] > last }
        }
        let sorted = kept.sorted { a, b in
            keys[a] != keys[b] ? keys[a] < keys[b] : candidates[a].id < candidates[b].id
        }
        guard request.offset < sorted.count else { return [] }
        let end = min(sorted.count, needed)
        var low = request.offset, high = end - 1
        while low > 0 && keys[sorted[low - 1]] == keys[sorted[request.offset]] { low -= 1 }
        while high + 1 < sorted.count && keys[sorted[high + 1]] == keys[sorted[end - 1]] { high += 1 }
        let window = try withDetails(sorted[low...high].map { candidates[$0] })
        return request.order(of: window)[(request.offset - low)..<(end - low)].map { window[$0] }
    }
}
