import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// A word with its typo expansions (or a group of alternatives) within a region, or nearest first, from every
/// row the alternatives hold there: each alternative's complete placed list (see TermLeaders+Places) walked for
/// the region's entries, a rare alternative's rows read from FTS5, and only those rows scored.
///
/// Tier by tier, a word whose own rows lie elsewhere (`santa` near Braunschweig, `pedro` around Paris) needs
/// every expansion's rows in the region; the R-tree's plans scored the region's thousands of places, FTS5's
/// scanned the expansions' doclists (4–12 ms at 939,632 items). A complete list holds every placed row of its
/// term, so its region's rows are found in a pass over a few bytes an entry; nearest first, the lists' places
/// order the rows before any is read.
extension Search {
    /// The rows of alternatives without a complete list that are read from FTS5 at most (≈ 0.5 µs each):
    /// rarer words than those listed.
    static let mostUnlistedRows = 4_000

    /// The region's candidate rows scored at most (≈ 2 µs each), by relevance: more and the region holds
    /// enough of them for the other plans' pruning to pay.
    static let mostPlacedRowsScored = 1_500

    /// The candidates of the query's one group of alternatives within the request's region by relevance, or
    /// nearest first: every matching row of the region, or for a distance order the nearest `needed` and
    /// every row that may tie with them. Nil, for the other plans to answer, when:
    /// - no alternative has a complete placed list, or one has a list that leaves rows off without a tail
    ///   (``TermLeaders/PlacedTail``);
    /// - the alternatives without a list hold more than ``mostUnlistedRows`` rows;
    /// - by relevance, one word alone (its placed list's walk answers, ``placedListPage(_:)``), or more than
    ///   ``mostPlacedRowsScored`` rows in the region; nearest first, more than ``maximumPlacedReads`` rows read
    ///   (filters leave most out);
    /// - a narrow region holds fewer places than walking the lists costs (``placesWorthAWalk(entries:)``);
    /// - a list is damaged, or a row's vector cannot score it.
    mutating func placedRowsPage(_ parsed: ParsedQuery) throws -> [Candidate]? {
        let byDistance = request.effectiveSort == .distance
        guard request.usesTermLeaders, request.sortAttribute == nil, needed <= TermLeaders.maximumPlacedPage,
              parsed.required.count == 1, parsed.excluded.isEmpty, byDistance || parsed.leaderKey == nil,
              byDistance || request.radius != nil || request.boundingBox != nil,
              let region = PlacedRegion(request, boxes: regionBoxes(radius: request.radius)) else { return nil }
        // Each alternative's complete list (once: two typos may expand to one term), or its rows counted from
        // the vocabulary when it has no list and is rare enough.
        var lists: [TermLeaders.PlacedListing] = [], unlisted: [ParsedQuery.Term] = [], unlistedRows = 0
        var keys: Set<String> = []
        for alternative in parsed.required[0].flatMap(\.alternatives) {
            let key = alternative.term.leaderKey
            if let key, !keys.insert(key).inserted { continue }
            if let key, let list = try TermLeaders.placedListing(key: key, db: db) {
                // A list that leaves rows off without a tail holds more than any unlisted alternative may. Nearest
                // first, every entry's distance is computed: a tail is walked only up to a word's list's length
                // (`Sa*` near Madrid, with its tail: 5.4 → 10.1 ms; `Man*` near London 25.6 → 2.6).
                guard list.isComplete, !byDistance || list.drift.threshold == nil || list.entries <= Int64(TermLeaders.placedWordRows)
                else { return nil }
                lists.append(list)
                continue
            }
            unlistedRows += try estimate(tokens: alternative.term.tokens, isPrefix: alternative.term.isPrefix)
            guard unlistedRows <= Self.mostUnlistedRows else { return nil }
            unlisted.append(alternative.term)
        }
        // No list: text-then-place reads the same rows in one pass.
        guard !lists.isEmpty else { return nil }
        if region.span < Self.narrowestPlacedRegion {
            let worth = Self.placesWorthAWalk(entries: lists.reduce(0) { $0 + $1.entries })
            guard try countInRegion(cap: worth, radius: request.radius) >= worth else { return nil }
        }

        // The region's rows, ids repeated when several alternatives hold them; nearest first, with their
        // distances by the places the lists keep (rounded to `Float`).
        var rows: [(distance: Double, id: Int64)] = []
        let center = center
        func add(_ id: Int64, latitude: Double, longitude: Double, in region: PlacedRegion) {
            guard region.mayHold(latitude: latitude, longitude: longitude) else { return }
            let distance = byDistance ? center.map { GeoMath.distance($0.latitude, $0.longitude, latitude, longitude) } ?? 0 : 0
            rows.append((distance, id))
        }
        // A tail's places are rounded coarser than a list's: the nearest rows' order allows for it.
        let tailRegion = region.widened(for: .tail)
        for list in lists {
            let walked = try list.walk(db: db) { entry in
                add(entry.id, latitude: Double(entry.latitude), longitude: Double(entry.longitude), in: region)
                // By relevance every row is scored: past the most, stop before the walk costs more.
                return byDistance || rows.count <= Self.mostPlacedRowsScored ? nil : false
            }
            guard walked == nil else { return nil }  // too many rows, or a damaged list
            if list.drift.threshold != nil {
                let walked = try list.walkTail(db: db) { id, latitude, longitude in
                    add(id, latitude: latitude, longitude: longitude, in: tailRegion)
                    return byDistance || rows.count <= Self.mostPlacedRowsScored
                }
                guard walked == true else { return nil }  // too many rows, or a damaged tail
            }
        }
        if !unlisted.isEmpty {
            for match in try textPlaces(expression: "(" + unlisted.map(\.expression).joined(separator: " OR ") + ")") {
                // Rounded as a list's places are, and checked with its margins.
                if let latitude = match.latitude, let longitude = match.longitude {
                    add(match.id, latitude: Double(Float(latitude)), longitude: Double(Float(longitude)), in: region)
                }
            }
        }
        let rounding: PlacedRegion.Rounding = lists.contains { $0.drift.threshold != nil } ? .tail : .list
        // Nothing in the region: no vectors to build (they count the rows of each phrase without a list).
        if rows.isEmpty { return [] }
        guard byDistance || rows.count <= Self.mostPlacedRowsScored, let query = try vectorQuery(parsed) else { return nil }

        let statement = try scoredRowStatement(reading: "each row of the alternatives that may lie in the region")
        do {
            return try SQLiteCall.withVectorQuery(query.pointer, boundTo: statement, parameter: 1) {
                byDistance ? try nearest(of: rows, rounding: rounding, with: statement) : try scored(Set(rows.map(\.id)).sorted(), with: statement)
            }
        } catch let error as DatabaseError where error.message == SEARCHLIGHT_VECTOR_FALLBACK_LIMIT {
            // Rows the vectors cannot score (a prefix's term twice at one position): the other plans scan FTS5.
            return nil
        }
    }

    /// The hits among rows by id (in id order: the items' B-tree read forward); nil when a row's vector does
    /// not match (a list or FTS5 is not what it says).
    private func scored(_ ids: [Int64], with statement: Statement) throws -> [Candidate]? {
        var hits: [Candidate] = []
        for id in ids {
            switch try Self.readScoredRow(id, with: statement, db: db) {
            case .filteredOut: continue
            case .unmatched: return nil
            case .scored(let candidate): if let hit = refine(candidate) { hits.append(hit) }
            }
        }
        return hits
    }

    /// The nearest `needed` hits among rows with their distances by places rounded as `rounding` says, and every
    /// hit that may tie with the last: read nearest first until the next row, however its place rounded, lies past the last
    /// hit's exact distance. Selected in rounds of the nearest few (a word's rows anywhere are up to 65,536 a
    /// list, and sorting them all took most of the search); nil after ``maximumPlacedReads`` reads or a row its
    /// vector does not match.
    private func nearest(of rows: [(distance: Double, id: Int64)], rounding: PlacedRegion.Rounding, with statement: Statement) throws -> [Candidate]? {
        let margin = 2 * rounding.meters
        var found: [Candidate] = [], distances: [Double] = [], read: Set<Int64> = [], reads = 0
        // Rows up to `cutoff` are read in a round; the first round's `k` allows for ids held by several lists.
        var below = -Double.infinity, k = needed * 4
        while below < .infinity {
            let cutoff = k >= rows.count ? Double.infinity : Self.smallest(k, of: rows.map(\.distance))
            let round = rows.filter { $0.distance > below && $0.distance <= cutoff }.sorted { $0.distance < $1.distance }
            for row in round {
                if distances.count >= needed, row.distance > distances[needed - 1] + margin { return found }
                guard read.insert(row.id).inserted else { continue }
                reads += 1
                guard reads <= Self.maximumPlacedReads else { return nil }
                switch try Self.readScoredRow(row.id, with: statement, db: db) {
                case .filteredOut: continue
                case .unmatched: return nil
                case .scored(let candidate):
                    guard let hit = refine(candidate) else { continue }
                    found.append(hit)
                    let distance = hit.distance ?? .infinity
                    distances.insert(distance, at: distances.firstIndex { $0 > distance } ?? distances.endIndex)
                    if distances.count > needed { distances.removeLast() }
                }
            }
            below = cutoff
            k *= 4
        }
        return found
    }
}
