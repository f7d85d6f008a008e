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
    /// every row that may tie with them; nil when an alternative has no complete list and too many rows, or
    /// the region holds too many of them.
    mutating func placedRowsPage(_ parsed: ParsedQuery) throws -> [Candidate]? {
        let byDistance = request.effectiveSort == .distance
        guard request.usesTermLeaders, request.sortAttribute == nil, needed <= TermLeaders.maximumPlacedPage,
              parsed.required.count == 1, parsed.excluded.isEmpty,
              byDistance || request.radius != nil || request.boundingBox != nil, let center,
              let region = PlacedRegion(request, boxes: regionBoxes(radius: request.radius)) else { return nil }
        // Each alternative's complete list, or its rows counted from the vocabulary when rare enough.
        var lists: [TermLeaders.PlacedListing] = [], unlisted: [ParsedQuery.Term] = [], unlistedRows = 0
        for alternative in parsed.required[0].flatMap(\.alternatives) {
            if let key = alternative.term.leaderKey, let list = try TermLeaders.placedListing(key: key, db: db), list.drift.threshold == nil {
                lists.append(list)
                continue
            }
            unlistedRows += try estimate(tokens: alternative.term.tokens, isPrefix: alternative.term.isPrefix)
            guard unlistedRows <= Self.mostUnlistedRows else { return nil }
            unlisted.append(alternative.term)
        }
        // No list: text-then-place reads the same rows in one pass.
        guard !lists.isEmpty else { return nil }
        // The region's rows, with their places rounded to `Float` as the lists keep them.
        var places: [Int64: (latitude: Float, longitude: Float)] = [:]
        for list in lists {
            let walked = try list.walk(db: db) { entry in
                guard region.mayHold(latitude: entry.latitude, longitude: entry.longitude) else { return nil }
                places[entry.id] = (entry.latitude, entry.longitude)
                // By relevance every row is scored: past the most, stop before the walk costs more.
                return byDistance || places.count <= Self.mostPlacedRowsScored ? nil : false
            }
            guard walked == nil else { return nil }  // too many rows, or a damaged list
        }
        if !unlisted.isEmpty {
            let sql = """
                SELECT i.id, i.latitude, i.longitude FROM items_fts JOIN items i ON i.id = items_fts.rowid
                WHERE items_fts MATCH ? AND i.latitude IS NOT NULL AND i.longitude IS NOT NULL
                """
            let expression = "(" + unlisted.map(\.expression).joined(separator: " OR ") + ")"
            record(sql, [expression])
            let rows = try db.cachedStatement(sql: sql)
            rows.setUncheckedArguments([expression])
            let handle = rows.sqliteStatement
            defer { sqlite3_reset(handle) }
            while try SQLiteCall.step(handle, db: db) {
                let latitude = Float(sqlite3_column_double(handle, 1)), longitude = Float(sqlite3_column_double(handle, 2))
                if region.mayHold(latitude: latitude, longitude: longitude) { places[sqlite3_column_int64(handle, 0)] = (latitude, longitude) }
            }
        }
        // Nothing in the region: no vectors to build (they count the rows of each phrase without a list).
        if places.isEmpty { return [] }
        guard byDistance || places.count <= Self.mostPlacedRowsScored, let query = try vectorQuery(parsed) else { return nil }

        let filter = itemFilter(probing: true, itemID: "i.id")
        let sql = """
            SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude,
                searchlight_vector_rank(i.id, i.term_vector, i.value_lengths, i.rank, ?) AS score
            FROM items i WHERE i.id = ?\(filter.sql)
            """
        record(sql, ["(the query's term vectors)", "(each row of the alternatives that may lie in the region)"] + filter.arguments)
        let statement = try db.cachedStatement(sql: sql)
        statement.setUncheckedArguments([DatabaseValue.null, 0] + filter.arguments)
        let handle = statement.sqliteStatement
        // The row's candidate when it is a hit; nil when the filters or the region leave it out. Throws
        // `unscored` for a row its vector does not match: the lists or FTS5 are not what they say.
        struct Unscored: Error {}
        func read(_ id: Int64) throws -> Candidate? {
            sqlite3_reset(handle)
            sqlite3_bind_int64(handle, 2, id)
            guard try SQLiteCall.step(handle, db: db) else { return nil }
            guard sqlite3_column_type(handle, 6) != SQLITE_NULL else { throw Unscored() }
            return refine(Candidate(id: sqlite3_column_int64(handle, 0), uri: SQLiteCall.text(handle, 1), entity: SQLiteCall.text(handle, 2),
                                    displayName: SQLiteCall.text(handle, 3), latitude: SQLiteCall.optionalDouble(handle, 4),
                                    longitude: SQLiteCall.optionalDouble(handle, 5), score: -sqlite3_column_double(handle, 6)))
        }
        do {
            return try SQLiteCall.withVectorQuery(query.pointer, boundTo: statement, parameter: 1) {
                guard byDistance else { return try places.keys.compactMap(read) }
                // Nearest first by the lists' places, read until the next row, however its place rounded, lies
                // beyond the page's last: every row that may tie with it is read too.
                let margin = 2 * PlacedRegion.meterMargin
                let nearest = places.map { id, place in
                    (id: id, distance: GeoMath.distance(center.latitude, center.longitude, Double(place.latitude), Double(place.longitude)))
                }.sorted { $0.distance < $1.distance }
                var found: [Candidate] = [], distances: [Double] = []
                for row in nearest {
                    if distances.count >= needed, row.distance > distances[needed - 1] + margin { break }
                    guard let candidate = try read(row.id) else { continue }
                    found.append(candidate)
                    let distance = candidate.distance ?? .infinity
                    distances.insert(distance, at: distances.firstIndex { $0 > distance } ?? distances.endIndex)
                    if distances.count > needed { distances.removeLast() }
                }
                return found
            }
        } catch is Unscored {
            return nil
        } catch let error as DatabaseError where error.message == SEARCHLIGHT_VECTOR_FALLBACK_LIMIT {
            // Rows the vectors cannot score (a prefix's term twice at one position): the other plans scan FTS5.
            return nil
        }
    }
}
