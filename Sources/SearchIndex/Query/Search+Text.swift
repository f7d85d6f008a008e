import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// Full-text matches: ranked top-k, scores of given rows, snippets.
extension Search {
    mutating func textMatches(expression: String, pagedInSQL: Bool) throws -> [Candidate] {
        // An attribute filter probes each row FTS5 hands over before the row is joined to its item: most
        // rows of a frequent word in a small country are never joined (`lake` in France: p50 4.1 → 2.0 ms
        // at 940k items, with the covering index of schema 11).
        let filter = itemFilter(probing: true, itemID: "items_fts.rowid")
        // A page of the best rows only: the ranking prunes what cannot reach it.
        let keep = request.limit.addingReportingOverflow(request.offset)
        let prunes = pagedInSQL && !keep.overflow && keep.partialValue <= SearchIndex.maximumPrunedPage
        // One frequent word or prefix, nothing else: its leader list answers when it can prove its page exact.
        if prunes, request.usesTermLeaders, filter.sql.isEmpty, let key = parsed?.leaderKey,
           let page = try TermLeaders.page(key: key, plan: phrasePlan, offset: request.offset, limit: request.limit, db: db) {
            record(TermLeaders.listSQL, [key])
            return page
        }
        // Alternatives, or a word with typo expansions: tier by tier, frequent alternatives from their lists.
        if prunes, request.usesTermLeaders, filter.sql.isEmpty, let group = parsed?.typoTieredGroup,
           let page = try typoTierPage(of: group, offset: request.offset, limit: request.limit) {
            return page
        }
        // One frequent word under a filter: its placed list's best rows, read under the filter, when they prove
        // the page.
        let comparison = prunes && ranksPageInSQL ? try drivingComparison() : nil
        if prunes, ranksPageInSQL, !filter.sql.isEmpty, let parsed, parsed.leaderKey != nil {
            let matches = try matchEstimate ?? estimate(parsed)
            matchEstimate = matches
            if let page = try filteredListPage(parsed, among: comparison.flatMap(keptIDs), matches: matches) { return request.page(of: page) }
        }
        // A filter keeping few items beside words held by many: each row checked against the items it keeps
        // (read once, in a C binary search) before the filter's probe.
        if let comparison, let driven = try filterDrivenIDs(comparison) {
            return request.page(of: try textMatches(expression: expression, within: driven.ids, probingFilter: !driven.isWholeFilter))
        }
        var sql = """
            SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, \(prunes ? SearchIndex.topRankFunction : SearchIndex.rankFunction) AS score
            FROM items_fts JOIN items i ON i.id = items_fts.rowid
            WHERE items_fts MATCH ?\(filter.sql)
            """
        var arguments: StatementArguments = (prunes ? [phrasePlan, keep.partialValue] : [phrasePlan]) + [expression] + filter.arguments
        if pagedInSQL {
            sql += " ORDER BY score, i.uri LIMIT ? OFFSET ?"
            arguments += [min(request.limit, Int(Int32.max)), request.offset]
        }
        record(sql, arguments)
        return try rankedCandidates(Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments))
    }

    /// The fewest matches estimated for a filter to drive the words' scan: below, probing each row costs
    /// less than a millisecond.
    static let fewestMatchesDrivenByFilter = 2_000
    /// The most items a driving comparison may keep, per match estimated: reading an id through the covering
    /// index costs about 0.1 µs, a row checked against the ids 0.1 µs, a row probed 0.45 µs (939,632 places).
    static let filterIDsPerMatch = 2
    /// The ids read first, to estimate how many the equality keeps.
    static let sampledIDs = 256
    /// The most ids read for a driving comparison (2 MB).
    static let mostFilterDrivenIDs = 250_000

    /// The items the filter's driving comparison keeps (``FilterPredicate/drivingItems()``), sorted, when
    /// they are few beside the words' estimated matches, or were read before on this connection; nil otherwise.
    /// A range's rows are counted first: `santa` with `population > 1000000` (2,248 items) within 2,000 km of
    /// Łódź probed each of its 12,000 rows and their expansions'.
    /// `isWholeFilter`: the comparison is the whole filter, so a row among the items needs no probe.
    ///
    /// Each row of the words is then checked against them (`searchlight_in_ids`) before the filter's probe,
    /// which SQLite runs last, as it does every subquery: probing each of `san`'s 24,312 rows for
    /// `country == "AT"` was most of its 14 ms at 939,632 places (6.2 ms driven). An equality keeping many
    /// items is probed until the probes spent on it would have read them; then it is read and kept
    /// (``FilterItemSets``).
    mutating func filterDrivenIDs(_ comparison: DrivingComparison) throws -> (ids: [Int64], isWholeFilter: Bool)? {
        guard let predicate, let parsed else { return nil }
        let (driving, key, version) = (comparison.items, comparison.key, comparison.version)
        let matches = try matchEstimate ?? estimate(parsed)
        matchEstimate = matches
        guard matches >= Self.fewestMatchesDrivenByFilter else { return nil }
        let isWholeFilter = if case .comparison = predicate { true } else { false }
        if let itemSets, let version, let kept = itemSets.ids(for: key, db: db, version: version) {
            record(driving.sql + " -- kept from an earlier search", driving.arguments)
            return (kept, isWholeFilter)
        }
        let most = min(Self.mostFilterDrivenIDs, matches * Self.filterIDsPerMatch)
        var limit = most, spending = false
        if let itemSets, let version, itemSets.keepsMany(key, db: db, version: version) {
            spending = true
        } else if let count = driving.count {
            // A range: its rows counted from the index alone (≈ 0.03 µs each), up to what is worth reading.
            let sql = count.sql + " LIMIT \(most + 1))"
            record(sql, count.arguments)
            guard try Int.fetchOne(db.cachedStatement(sql: sql), arguments: count.arguments) ?? 0 <= most else {
                // Counted for nothing: the connection's searches probe it, spending, as for an equality.
                if let itemSets, let version { itemSets.keepsMore(than: most, key: key, db: db, version: version) }
                return nil
            }
        } else {
            // A sample first: reading an equality that keeps too many costs as much as probing saves (`new` in
            // the United States, 87,132 items for 39,872 matches: 40 → 58 ms). Fewer than the sample: they are
            // all read. Its ids come in id order (the index's last column), the lowest first: spread over a narrow
            // span of the items' ids, it keeps many (clustered ids overestimate).
            let sampled = Self.sampledIDs
            let sample = driving.sql + " LIMIT \(sampled)"
            record(sample, driving.arguments)
            let ids = try Int64.fetchAll(db.cachedStatement(sql: sample), arguments: driving.arguments)
            if ids.count < sampled { return kept(ids.sorted(), key: key, version: version, isWholeFilter: isWholeFilter) }
            guard let low = ids.min(), let high = ids.max(), high > low,
                  let span = try Int64.fetchOne(db.cachedStatement(sql: "SELECT (SELECT max(id) FROM items) - (SELECT min(id) FROM items)"))
            else { return nil }
            spending = Double(sampled - 1) * Double(span) / Double(high - low) > Double(most)
        }
        if spending {
            // Probed this time, unless this connection's probes of the equality would have read it by now.
            guard let itemSets, let version,
                  let affordable = itemSets.spend(Double(matches) * FilterItemSets.probeCost, atLeast: Self.sampledIDs, on: key, db: db, version: version)
            else { return nil }
            limit = affordable
        }
        let sql = driving.sql + " LIMIT \(limit + 1)"
        record(sql, driving.arguments)
        let ids = try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: driving.arguments)
        guard ids.count <= limit else {
            // Read for nothing: the connection's searches probe it, spending, until a read would reach its end.
            if let itemSets, let version { itemSets.keepsMore(than: limit, key: key, db: db, version: version) }
            return nil
        }
        // Repeated ids (an item holding two values the comparison keeps) are harmless to the binary search.
        return kept(ids.sorted(), key: key, version: version, isWholeFilter: isWholeFilter)
    }

    /// The most items a filter may keep for words within a region to be scored whole among them rather than
    /// taken apart, tier by tier or alternative by alternative: scoring the words' rows among them (≈ 0.65 µs
    /// each, besides the scan of their doclists) then costs less than a few searches of their own, each walking
    /// lists the filter thins out. `santa` with `population > 1000000` (2,248 items) within 2,000 km of Łódź:
    /// 13.2 ms in tiers, 3.8 scored whole, at 939,632 places.
    static let mostFilterItemsScoredWhole = 5_000

    /// Whether the filter's driving comparison (``FilterPredicate/drivingItems()``: an equality or a range, the
    /// filter or a part of its top `AND`) keeps at most ``mostFilterItemsScoredWhole`` items. A range's rows are
    /// counted, an equality's ids read, never more than one past the bound; ids read are kept for the
    /// connection's searches, which then check rows against them. Nothing is spent (``FilterItemSets``): no
    /// row was probed. Decided once per search.
    mutating func filterKeepsFewItems() throws -> Bool {
        if let decided = keepsFewItems { return decided }
        var few = false
        if let comparison = try drivingComparison() {
            let most = Self.mostFilterItemsScoredWhole
            if let kept = keptIDs(comparison) {
                few = kept.count <= most
            } else if let count = comparison.items.count {
                let sql = count.sql + " LIMIT \(most + 1))"
                record(sql, count.arguments)
                few = try Int.fetchOne(db.cachedStatement(sql: sql), arguments: count.arguments) ?? 0 <= most
            } else {
                let sql = comparison.items.sql + " LIMIT \(most + 1)"
                record(sql, comparison.items.arguments)
                let ids = try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: comparison.items.arguments)
                few = ids.count <= most
                if few { _ = kept(ids.sorted(), key: comparison.key, version: comparison.version, isWholeFilter: false) }
            }
        }
        keepsFewItems = few
        return few
    }

    /// The filter's driving comparison (``FilterPredicate/drivingItems()``), with its key among a connection's
    /// kept items and the version of the snapshot searched: made once for the filtered plans a search tries.
    struct DrivingComparison {
        let items: FilterPredicate.DrivingItems
        /// Its statement and arguments.
        let key: String
        /// Nil when the search keeps no items.
        let version: FilterItemSets.Version?
    }

    /// The request's driving comparison; nil when its filter has none.
    func drivingComparison() throws -> DrivingComparison? {
        guard let predicate, let items = predicate.drivingItems() else { return nil }
        return DrivingComparison(items: items, key: "\(items.sql) \(items.arguments)", version: try itemSets.map { _ in try FilterItemSets.Version(db) })
    }

    /// The items of a driving comparison that a search on this connection read and kept, sorted; nil when none
    /// did (nothing is read here).
    func keptIDs(_ comparison: DrivingComparison) -> [Int64]? {
        guard let itemSets, let version = comparison.version else { return nil }
        return itemSets.ids(for: comparison.key, db: db, version: version)
    }

    /// Driving ids, kept for the connection's next searches.
    private func kept(_ ids: [Int64], key: String, version: FilterItemSets.Version?, isWholeFilter: Bool) -> (ids: [Int64], isWholeFilter: Bool) {
        if let itemSets, let version { itemSets.keep(ids, for: key, db: db, version: version) }
        return (ids, isWholeFilter)
    }

    /// Candidates from rows of `id, uri, entity, display_name, latitude, longitude, score` (the ranking's minus).
    func rankedCandidates(_ rows: [Row]) throws -> [Candidate] {
        try rows.map { row in
            Candidate(id: try row.integer(0), uri: try row.text(1), entity: try row.text(2), displayName: try row.text(3),
                      latitude: try row.optionalNumber(4), longitude: try row.optionalNumber(5), score: -(try row.number(6)), distance: nil)
        }
    }

    /// The matches among `ids` (sorted), scored: one FTS5 scan whose rows outside the set are dropped
    /// before any join or scoring (`searchlight_in_ids`, the set bound as a pointer). Ordered by relevance
    /// for a page, only the page's best rows are scored: the rows the place filters leave out (the R-tree's
    /// boxes hold more than the circle) are dropped in SQL first, so that they never raise the bar
    /// (`searchlight_placed`), and only the page's rows leave SQLite. Every place within 50 km of Mexico City
    /// holds `city` (its time zone): 8.6 → 5.7 ms at 940k items.
    /// `probingFilter: false` leaves the filter out (the entity kinds stay): `ids` are the items it keeps.
    mutating func textMatches(expression: String, within ids: [Int64], probingFilter: Bool = true) throws -> [Candidate] {
        guard !ids.isEmpty else { return [] }
        let filter = probingFilter ? itemFilter(probing: true, itemID: "items_fts.rowid") : entityOnlyFilter
        let prunes = ranksPageInSQL
        let sql = """
            SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, \(prunes ? SearchIndex.topRankFunction : SearchIndex.rankFunction) AS score
            FROM items_fts JOIN items i ON i.id = items_fts.rowid
            WHERE items_fts MATCH ? AND items_fts.rowid >= ? AND items_fts.rowid <= ?\(filter.sql)\(prunes ? " AND searchlight_placed(i.latitude, i.longitude, ?)" : "") AND searchlight_in_ids(items_fts.rowid, ?)
            """ + (prunes ? " ORDER BY score, i.uri LIMIT \(needed)" : "")  // a literal: the id set's parameter stays last
        let plan = try countedPhrasePlan()
        let statement = try db.cachedStatement(sql: sql)
        // A scan per run of nearby row ids, when the doclist entries between runs cost more than a statement.
        // An excluded prefix is merged again by each scan as much as a required one.
        let splits = parsed.map { !$0.hasPrefix && !$0.excluded.contains(where: \.isPrefix) } ?? false
        let ranges = Self.rowIDRanges(ids, entriesPerRow: splits ? try matchDensity() : 0, splits: splits)
        var candidates: [Candidate] = []
        for range in ranges {
            let arguments: StatementArguments = (prunes ? [plan, needed] : [plan]) + [expression, range.lowerBound, range.upperBound] + filter.arguments
            record(sql, arguments + (prunes ? ["(the place filters)"] : []) + ["(\(ids.count) row ids)"])
            statement.setUncheckedArguments(arguments)
            func fetch() throws -> [Candidate] {
                try SQLiteCall.withIDSet(ids, boundTo: statement) { try rankedCandidates(Row.fetchAll(statement)) }
            }
            guard prunes else { candidates += try fetch(); continue }
            // The place filters' parameter comes just before the id set's, the last.
            let parameter = sqlite3_bind_parameter_count(statement.sqliteStatement) - 1
            candidates += try SQLiteCall.withPlacement(of: request, boundTo: statement, parameter: parameter, fetch)
        }
        return candidates
    }

    /// The page's best matches among the rows the place filters keep, by relevance, from one FTS5 scan: each
    /// row's place is checked before it is scored (`searchlight_placed`), so that only the region's rows are
    /// scored and raise the ranking's bar, and only the page leaves SQLite. Scoring every match and
    /// filtering their places after took 121 ms for `city` near Paris (63,684 matches, 940k items).
    mutating func placedTextPage(expression: String) throws -> [Candidate] {
        // A filter keeping few items: each row checked against them before the probe, as without a place.
        if let comparison = try drivingComparison(), let driven = try filterDrivenIDs(comparison) {
            return try textMatches(expression: expression, within: driven.ids, probingFilter: !driven.isWholeFilter)
        }
        let filter = itemFilter(probing: true, itemID: "items_fts.rowid")
        let sql = """
            SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, \(SearchIndex.topRankFunction) AS score
            FROM items_fts JOIN items i ON i.id = items_fts.rowid
            WHERE items_fts MATCH ?\(filter.sql) AND searchlight_placed(i.latitude, i.longitude, ?)
            ORDER BY score, i.uri LIMIT \(needed)
            """  // a literal: the place filters' parameter stays last
        let arguments: StatementArguments = [try countedPhrasePlan(), needed, expression] + filter.arguments
        record(sql, arguments + ["(the place filters)"])
        let statement = try db.cachedStatement(sql: sql)
        statement.setUncheckedArguments(arguments)
        let parameter = sqlite3_bind_parameter_count(statement.sqliteStatement)
        return try SQLiteCall.withPlacement(of: request, boundTo: statement, parameter: parameter) {
            try rankedCandidates(Row.fetchAll(statement))
        }
    }

    /// Whether a page by relevance is ranked in SQL, the ranking pruning what cannot reach it.
    var ranksPageInSQL: Bool {
        request.effectiveSort == .relevance && request.sortAttribute == nil && needed <= SearchIndex.maximumPrunedPage
    }

    /// Doclist entries per row id of the query's matches (the planner's estimate over the row-id span).
    mutating func matchDensity() throws -> Double {
        guard let parsed else { return 0 }
        let estimate = try matchEstimate ?? estimate(parsed)
        matchEstimate = estimate
        return Double(estimate) / Double(max(1, try estimatedItemCount()))
    }

    /// What a scan costs to start (a statement, FTS5 parsing the query and seeking each phrase) in doclist
    /// entries walked (≈ 0.03 µs each): a gap between row ids is skipped when walking it would cost more.
    static let scanStartEntries = 1_500.0

    /// The sorted ids' runs worth a scan each: split where the ids leave a gap whose doclist entries
    /// (`entriesPerRow` of them per row id) cost more to walk than a new scan; one range from the first id
    /// to the last without `splits` (a prefix is merged from all its terms before the first row of any
    /// scan, so each scan would merge it again). The R-tree's ids of a region cluster wherever items were
    /// written region by region (`Europa` within 50 km of Rome: 1,817 ids in a few dozen runs).
    static func rowIDRanges(_ ids: [Int64], entriesPerRow: Double, splits: Bool) -> [ClosedRange<Int64>] {
        guard let first = ids.first, let last = ids.last else { return [] }
        guard splits, entriesPerRow > 0 else { return [first...last] }
        let gap = scanStartEntries / entriesPerRow
        var ranges: [ClosedRange<Int64>] = [], start = first, previous = first
        for id in ids.dropFirst() {
            if Double(id) - Double(previous) > gap {
                ranges.append(start...previous)
                start = id
            }
            previous = id
        }
        ranges.append(start...previous)
        return ranges
    }

    /// Every match's place, unscored (URIs and names are read for the page only): what words ordered by
    /// distance need of a match. Scoring every match of `villa` to keep the nearest 10 took 9.3 ms; reading
    /// their places and scoring the page takes 4.5 (940k items).
    mutating func textPlaces(expression: String) throws -> [Candidate] {
        let filter = itemFilter(probing: true, itemID: "items_fts.rowid")
        let sql = "SELECT i.id, i.latitude, i.longitude FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ?\(filter.sql)"
        let arguments: StatementArguments = [expression] + filter.arguments
        record(sql, arguments)
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        var candidates: [Candidate] = []
        while try SQLiteCall.step(handle, db: db) {
            candidates.append(Candidate(id: sqlite3_column_int64(handle, 0), uri: "", entity: "", displayName: "",
                                        latitude: SQLiteCall.optionalDouble(handle, 1), longitude: SQLiteCall.optionalDouble(handle, 2)))
        }
        return candidates
    }

    /// The candidates with their scores (those read unscored), from one FTS5 scan kept to their rows.
    mutating func scored(_ candidates: [Candidate], expression: String) throws -> [Candidate] {
        let scores = Dictionary(try textMatches(expression: expression, within: candidates.map(\.id).sorted()).map { ($0.id, $0.score) },
                                uniquingKeysWith: { first, _ in first })
        return candidates.map { candidate in
            var scored = candidate
            scored.score = scores[candidate.id] ?? 0
            return scored
        }
    }

    mutating func snippet(id: Int64, expression: String) throws -> String? {
        // Prepared once per connection: a page of snippets runs it for every hit.
        let text = try String.fetchOne(db.cachedStatement(sql: "SELECT snippet(items_fts, -1, '[', ']', '…', 12) FROM items_fts WHERE items_fts MATCH ? AND rowid = ?"),
                                       arguments: [expression, id])
        return text?.replacingOccurrences(of: SearchIndex.fieldSeparator, with: " · ")
    }

    // MARK: Places

    /// Computes the distance and applies the place filters; nil when the candidate is outside them.
    func refine(_ candidate: Candidate) -> Candidate? {
        guard let distance = request.placement(latitude: candidate.latitude, longitude: candidate.longitude) else { return nil }
        var candidate = candidate
        candidate.distance = distance
        return candidate
    }
}

extension SearchRequest {
    /// Where a hit at this place stands against the request's place filters, exactly (great-circle distance,
    /// the box's own bounds): nil when the filters leave it out, else its distance from the reference point
    /// (`.some(nil)` when there is none). Every backend refines its candidates with it.
    package func placement(latitude: Double?, longitude: Double?) -> Double?? {
        let hasPlace = near != nil || boundingBox != nil
        guard let latitude, let longitude else { return hasPlace ? nil : .some(nil) }
        if let box = boundingBox, !box.contains(latitude: latitude, longitude: longitude) { return nil }
        var distance: Double?
        if let center = near ?? (effectiveSort == .distance ? boundingBox?.center : nil) {
            distance = GeoMath.distance(center.latitude, center.longitude, latitude, longitude)
        }
        if let radius, let distance, distance > radius { return nil }
        return .some(distance)
    }
}
