import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// Items by row ID, with their details, in the request's order.
extension Search {
    /// Items by id, entity-filtered, 500 per query.
    mutating func rows(ids: [Int64]) throws -> [Candidate] {
        let filter = entityFilter
        var candidates: [Candidate] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let sql = "SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude FROM items i WHERE i.id IN (\(databaseQuestionMarks(count: chunk.count)))\(filter.sql)"
            let arguments = StatementArguments(chunk) + filter.arguments
            if start == 0 { record(sql, arguments) }
            for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
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
    mutating func ordered(_ candidates: [Candidate]) throws -> [Candidate] {
        // Candidates read with their URIs (every hit within a radius) are sorted once, ties by URI.
        if candidates.allSatisfy({ !$0.uri.isEmpty }) { return request.page(of: candidates) }
        let key = request.orderKey
        let sorted = candidates.sorted { (key($0), $0.id) < (key($1), $1.id) }
        guard request.offset < sorted.count else { return [] }
        let end = min(sorted.count, needed)
        var low = request.offset, high = end - 1
        while low > 0 && key(sorted[low - 1]) == key(sorted[request.offset]) { low -= 1 }
        while high + 1 < sorted.count && key(sorted[high + 1]) == key(sorted[end - 1]) { high += 1 }
        let window = try withDetails(Array(sorted[low...high])).sorted { (key($0), $0.uri) < (key($1), $1.uri) }
        return Array(window[(request.offset - low)..<(end - low)])
    }
}
