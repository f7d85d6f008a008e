import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

extension SearchIndex {
    /// Column weights: display name and title above text above keywords. `searchlight_rank` puts a
    /// whole-value match (a name or one alternate name that is all of what was typed) above every partial
    /// match, ordered by the item's static rank; partial matches score BM25F per value, so a long list
    /// of alternate names neither buries nor piles up a match (see README, Relevance).
    static let weights = "10.0, 6.0, 2.0, 1.0"
    /// Its last argument is the query's phrase plan (``ParsedQuery/phrasePlan``), bound before the MATCH
    /// expression: each edit of a typo match costs ``typoPenalty``, more than any score.
    static let rankFunction = "searchlight_rank(items_fts, \(weights), i.rank, i.value_lengths, ?)"
    /// The same, for a query that keeps only its best k rows (its second argument): rows that cannot reach
    /// the k-th best score seen so far are not scored (top-k pruning; the k best come out the same).
    static let topRankFunction = "searchlight_rank(items_fts, \(weights), i.rank, i.value_lengths, ?, ?)"
    /// The most rows a query keeps with pruning (the ranking function's own limit).
    static let maximumPrunedPage = 10_000
    /// What one edit subtracts from a score (the ranking function's constant).
    static let typoPenalty = Double(SEARCHLIGHT_TYPO_PENALTY)
    /// The largest score a row reaches without typos, far below one penalty.
    static let scoreCeiling = 1e5

    /// Runs a search in one read transaction.
    public func search(_ request: SearchRequest) throws(SearchIndexError) -> SearchResults {
        let parsed = try Self.validate(request)
        let predicate = try self.predicate(of: request)
        let request = try withEntityKinds(request)
        return try read { db in
            try db.withTimeLimit(request.timeLimit) {
                // Typo expansions are looked for once, and only when needed: exact matches rank above every
                // typo match and score as they would alone, so a page they fill is the page. Facets and the
                // total count every match, typo matches included, and need them anyway.
                var parsed = parsed
                var expanded = !(request.typoTolerance && parsed.map(Search.mayExpand) == true)
                func expand() throws {
                    if !expanded, let typed = parsed { parsed = try Search.expanded(typed, db: db) }
                    expanded = true
                }
                var results: SearchResults
                let lazily = request.effectiveSort == .relevance && request.sortAttribute == nil && request.facets.isEmpty && !request.countsTotal
                if !expanded, lazily {
                    var exact = Search(db: db, request: request, parsed: parsed, predicate: predicate)
                    results = try exact.run()
                    if results.hits.count < request.limit {
                        try expand()
                        if parsed?.hasExpansions == true {
                            var search = Search(db: db, request: request, parsed: parsed, predicate: predicate)
                            results = try search.run()
                        }
                    }
                } else {
                    try expand()
                    var search = Search(db: db, request: request, parsed: parsed, predicate: predicate)
                    results = try search.run()
                }
                if results.hits.isEmpty, request.offset == 0, let parsed, let query = request.query {
                    results.suggestion = try Search.suggestion(for: parsed, query: query, db: db)
                }
                if !request.facets.isEmpty || request.countsTotal {
                    var all = Search(db: db, request: request.unpaged, parsed: parsed, predicate: predicate)
                    if let parsed, request.near == nil, request.boundingBox == nil {
                        // Words alone: one statement for the total, one per facet.
                        if request.countsTotal { results.total = try all.count() }
                        results.facets = try request.facets.map { name in try all.facet(name, expression: parsed.expression) }
                    } else {
                        // Otherwise the same search, unpaged, once: its hits are the total and the facets' items.
                        let ids = try all.plan().candidates.map(\.id)
                        if request.countsTotal { results.total = ids.count }
                        results.facets = try request.facets.map { name in try all.facet(name, ids: ids) }
                    }
                }
                return results
            }
        }
    }

    /// The number of hits a search has in all (no paging); ``SearchRequest/countsTotal`` gives it with the
    /// page, from the same read transaction.
    public func count(_ request: SearchRequest) throws(SearchIndexError) -> Int {
        let unpaged = request.unpaged
        let parsed = try Self.validate(unpaged)
        let predicate = try self.predicate(of: unpaged)
        let widened = try withEntityKinds(unpaged)
        return try read { db in
            try db.withTimeLimit(request.timeLimit) {
                let parsed = try parsed.map { parsed in request.typoTolerance && Search.mayExpand(parsed) ? try Search.expanded(parsed, db: db) : parsed }
                var search = Search(db: db, request: widened, parsed: parsed, predicate: predicate)
                return try search.count()
            }
        }
    }

    /// The request with its entity filter widened to sub-entities, unless it asks for exact entities.
    func withEntityKinds(_ request: SearchRequest) throws(SearchIndexError) -> SearchRequest {
        guard !request.exactEntities, !request.entities.isEmpty else { return request }
        var widened = request
        widened.entities = try entitiesOfKind(request.entities)
        return widened
    }

    /// The request's filter, parsed, with every attribute it names checked against the index: a
    /// misspelt attribute is an error that lists the ones the index has, not an empty answer.
    func predicate(of request: SearchRequest) throws(SearchIndexError) -> FilterPredicate? {
        let named = Set([request.sortAttribute?.name].compactMap { $0 } + request.facets)
        guard !named.isEmpty || request.filter != nil else { return nil }
        let known = try attributeNames()  // one skip-scan for the order, the facets and the filter
        if !named.isEmpty {
            if let unknown = named.subtracting(known).sorted().first {
                throw .invalidRequest(.unknownAttribute(name: unknown, use: request.facets.contains(unknown) ? .facet : .sort, known: known.sorted()))
            }
        }
        guard let text = request.filter else { return nil }
        let predicate = try PredicateParser.parse(text, variables: request.filterVariables)
        if let unknown = predicate.attributes.subtracting(known).sorted().first {
            let position = (text.range(of: unknown).map { text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: $0.lowerBound) } ?? 0) + 1
            throw .invalidPredicate(reason: known.isEmpty
                ? "no item has attribute '\(unknown)': the index's configuration declares none; add \"attributes\": {\"\(unknown)\": \"keyPath\"} to the entity in the configuration and index again"
                : "no item has attribute '\(unknown)'; the index has \(known.sorted().joined(separator: ", "))", position: position)
        }
        return predicate
    }

    /// The names of the attributes items carry (for filters, orders and facets).
    public func attributeNames() throws(SearchIndexError) -> Set<String> {
        try read { db in
            // A skip-scan over the (name, …) index: one probe per distinct name.
            var names: Set<String> = []
            var last = ""
            while let next = try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM item_attributes WHERE name > ? ORDER BY name LIMIT 1"), arguments: [last]) {
                names.insert(next)
                last = next
            }
            return names
        }
    }

    static func validate(_ request: SearchRequest) throws(SearchIndexError) -> ParsedQuery? {
        let parsed = try request.query.map { text throws(SearchIndexError) in try QueryParser.parse(text, lastWordIsPrefix: request.lastWordIsPrefix) }
        if parsed == nil && request.near == nil && request.boundingBox == nil && request.filter == nil {
            throw .invalidRequest(.nothingToSearch)
        }
        if request.radius != nil && request.near == nil {
            throw .invalidRequest(.radiusWithoutCenter)
        }
        if let radius = request.radius, !(radius.isFinite && radius >= 0) {
            throw .invalidLocation(reason: "the radius must be a distance of 0 or more")
        }
        if request.effectiveSort == .relevance && parsed == nil && request.filter == nil {
            throw .invalidRequest(.relevanceWithoutWords)
        }
        guard request.limit >= 1 else { throw .invalidRequest(.limitBelowOne) }
        guard request.offset >= 0 else { throw .invalidRequest(.negativeOffset) }
        return parsed
    }
}

/// One search in progress inside a read transaction.
struct Search {
    struct Candidate {
        var id: Int64
        var uri: String
        var entity: String
        var displayName: String
        var latitude: Double?
        var longitude: Double?
        var score: Double = 0
        var distance: Double?
    }

    let db: Database
    let request: SearchRequest
    let parsed: ParsedQuery?
    let predicate: FilterPredicate?
    /// Every statement run, with its arguments — kept only for `explain`.
    private(set) var statements: [(sql: String, arguments: StatementArguments)] = []
    private let recordsStatements: Bool

    init(db: Database, request: SearchRequest, parsed: ParsedQuery?, predicate: FilterPredicate? = nil, recordsStatements: Bool = false) {
        self.db = db
        self.request = request
        self.parsed = parsed
        self.predicate = predicate
        self.recordsStatements = recordsStatements
    }

    /// Notes a statement for `explain`; a plain search keeps nothing.
    mutating func record(_ sql: String, _ arguments: StatementArguments) {
        if recordsStatements { statements.append((sql, arguments)) }
    }

    /// The ranking function's phrase plan for the query (its typo expansions' edits).
    var phrasePlan: String { parsed?.phrasePlan ?? "" }

    var needed: Int { request.offset.addingReportingOverflow(request.limit).overflow ? Int.max : request.offset + request.limit }
    var center: Coordinate? { request.near ?? request.boundingBox?.center }

    /// The entity and filter conditions every plan applies to the items it reads.
    var entityFilter: (sql: String, arguments: StatementArguments) { itemFilter(probing: true) }

    /// The entity and filter conditions; `probing` checks each item read against the attribute index
    /// (for plans driven by FTS5, the R-tree or an ordered walk), otherwise the filter's item set is read
    /// once (for the filter-only plan, which it drives).
    func itemFilter(probing: Bool) -> (sql: String, arguments: StatementArguments) {
        var sql = "", arguments = StatementArguments()
        if !request.entities.isEmpty {
            sql += " AND i.entity IN (\(Array(repeating: "?", count: request.entities.count).joined(separator: ", ")))"
            arguments += StatementArguments(request.entities)
        }
        if let predicate {
            let compiled = predicate.sql(correlated: probing)
            sql += " AND " + compiled.sql
            arguments += compiled.arguments
        }
        return (sql, arguments)
    }

    mutating func run() throws -> SearchResults {
        var (candidates, plan) = try plan()
        if let order = request.sortAttribute {
            // The filter plan walked the attribute in order and paged already.
            if plan != .filter { candidates = try ordered(candidates, by: order) }
        } else if plan != .text {
            // The text plan already ordered and paged in SQL.
            candidates = try ordered(candidates)
        }
        var hits = candidates.map { candidate in
            // The ranking function folds typos into the score as penalties; a hit reports them apart.
            // Only scores from searchlight_rank carry penalties (a filter plan's score is the item's raw rank).
            let ranked = parsed != nil && plan != .filter && plan != .nearest && candidate.score < 0
            let typos = ranked ? Int(min(64, ((SearchIndex.scoreCeiling - candidate.score) / SearchIndex.typoPenalty).rounded(.down))) : 0
            var hit = SearchHit(uri: candidate.uri, entity: candidate.entity, displayName: candidate.displayName,
                                score: candidate.score + Double(typos) * SearchIndex.typoPenalty,
                                latitude: candidate.latitude, longitude: candidate.longitude, distance: candidate.distance, snippet: nil)
            hit.typos = typos
            return hit
        }
        if request.snippets, let parsed {
            for index in hits.indices { hits[index].snippet = try snippet(id: candidates[index].id, expression: parsed.expression) }
        }
        return SearchResults(hits: hits, plan: plan, parsedQuery: parsed)
    }

    mutating func count() throws -> Int {
        if let parsed, request.near == nil, request.boundingBox == nil {
            let filter = entityFilter
            let sql = "SELECT COUNT(*) FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ?" + filter.sql
            return try Int.fetchOne(db, sql: sql, arguments: [parsed.expression] + filter.arguments) ?? 0
        }
        return try plan().candidates.count
    }

    // MARK: Planning

    mutating func plan() throws -> (candidates: [Candidate], plan: SearchPlan) {
        let spatial = request.near != nil || request.boundingBox != nil
        if parsed == nil && !spatial {
            return (try request.sortAttribute.map { order in try filtered(in: order) } ?? filtered(), .filter)
        }
        guard let parsed else { return (try nearest(textFilter: .none), .nearest) }
        // Ordered by an attribute, every match is needed before the page.
        guard spatial else { return (try textMatches(expression: parsed.expression, pagedInSQL: request.sortAttribute == nil), .text) }
        let bounded = request.radius != nil || request.boundingBox != nil
        let plan: SearchPlan
        if let forced = request.forcedPlan {
            plan = forced
        } else if !bounded && request.effectiveSort == .relevance {
            // Every match is a hit ordered by relevance: only the words narrow it down.
            plan = .textThenPlace
        } else {
            plan = try cheapestPlan(parsed, bounded: bounded)
        }
        switch plan {
        case .textThenPlace:
            let matches = try textMatches(expression: parsed.expression, pagedInSQL: false)
            return (matches.compactMap(refine), .textThenPlace)
        case .placeThenText:
            return (try nearest(textFilter: .probe(parsed.expression)), .placeThenText)
        default:
            return (try nearest(textFilter: .intersect(parsed.expression)), .intersection)
        }
    }

    /// The plan for words and a place with the least estimated work, in microseconds measured with
    /// `searchbench plans` at 939,632 items: a text match joined to its item and scored ≈ 1.8; a doclist
    /// entry scanned ≈ 0.03 (a prefix's, merged from every term it covers, ≈ 0.1); an R-tree row ≈ 0.3;
    /// probing FTS5 for one row id ≈ 20 per phrase — and a prefix rebuilds its whole doclist for every
    /// probe, so prefixes are never probed.
    mutating func cheapestPlan(_ parsed: ParsedQuery, bounded: Bool) throws -> SearchPlan {
        let textEstimate = try estimate(parsed)
        let total = max(1, try estimatedItemCount())
        // Unbounded (nearest first), circles grow until they hold enough matches: spread evenly, about
        // needed × total ÷ matches places. Words cluster (a word belongs to a language; `north` by distance
        // grew the circle for 150 ms where scoring every match took 7), so forty times `needed` is assumed:
        // a growing plan is chosen only when it wins by a wide margin. In floating point: an unpaged request
        // (a count, facets) needs Int.max hits.
        let placeCount = bounded ? try countInRegion(cap: textEstimate * 6 + 1, radius: request.radius)
            : Int(min(Double(total), 40 * Double(needed) * Double(max(1, total / max(1, textEstimate)))))
        let overlap = Double(textEstimate) * Double(placeCount) / Double(total)
        let hasPrefix = parsed.hasPrefix
        let phrases = Double(max(1, parsed.phraseCount))
        let scan = Double(textEstimate) * (hasPrefix ? 0.1 : 0.03)
        let probe = hasPrefix ? Double.infinity : 20 * phrases
        let costs: [(SearchPlan, Double)] = [
            (.textThenPlace, 1.8 * Double(textEstimate)),
            (.placeThenText, (0.3 + probe) * Double(placeCount)),
            (.intersection, (bounded ? 1 : 4) * scan + 0.3 * Double(placeCount) + 1.8 * overlap),
        ]
        return costs.min { $0.1 < $1.1 }?.0 ?? .intersection
    }

    /// An upper-bound-ish estimate of how many items the query matches, from FTS5's vocabulary: per
    /// group of alternatives (a word and its typo expansions) the sum of their document counts, the
    /// smallest group's sum for the query.
    mutating func estimate(_ parsed: ParsedQuery) throws -> Int {
        // Without prefixes, the first 2,000 matches of the expression itself, extrapolated over the row
        // ids when there are more: a few dozen microseconds, where fts5vocab counts by scanning the
        // doclist (7 ms for a word in 408,720 items). A prefix is merged from all its terms before its
        // first row, so it is counted from the vocabulary.
        if !parsed.hasPrefix {
            let sample = 2_000
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*), MAX(rowid) FROM (SELECT rowid FROM items_fts WHERE items_fts MATCH ? LIMIT ?)"),
                                       arguments: [parsed.expression, sample])
            let count = try row?.integer(0) ?? 0, last = try row?.optionalNumber(1) ?? 0
            guard count >= sample, last > 0 else { return Int(count) }
            return Int(Double(sample) * Double(try estimatedItemCount()) / last)
        }
        var groupEstimates: [Int] = []
        for group in parsed.required {
            var sum = 0
            for term in group {
                sum += try estimate(tokens: term.tokens, isPrefix: term.isPrefix)
                for expansion in term.expansions { sum += try estimate(tokens: [expansion.term], isPrefix: expansion.isPrefix) }
            }
            groupEstimates.append(sum)
        }
        return groupEstimates.min() ?? 0
    }

    /// The documents of a term's rarest token (a prefix's: of every term it covers, up to 5,000 terms).
    mutating func estimate(tokens: [String], isPrefix: Bool) throws -> Int {
        var estimate = Int.max
        for (index, token) in tokens.enumerated() {
            let count: Int
            if isPrefix && index == tokens.count - 1 {
                count = try Int.fetchOne(db.cachedStatement(sql: "SELECT SUM(doc) FROM (SELECT doc FROM items_vocab WHERE term >= ? AND term <= ? LIMIT 5000)"),
                                         arguments: [token, token + "\u{10FFFF}"]) ?? 0
            } else {
                count = try Int.fetchOne(db.cachedStatement(sql: "SELECT doc FROM items_vocab WHERE term = ?"), arguments: [token]) ?? 0
            }
            estimate = min(estimate, count)
        }
        return estimate == Int.max ? 0 : estimate
    }

    // MARK: Filter

    /// A search by attributes alone: every item the filter keeps, most important (static rank) first.
    mutating func filtered() throws -> [Candidate] {
        let filter = itemFilter(probing: false)
        let sql = "SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, i.rank FROM items i WHERE 1\(filter.sql)"
        record(sql, filter.arguments)
        return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: filter.arguments).map { row in
            Candidate(id: try row.integer(0), uri: try row.text(1), entity: try row.text(2), displayName: try row.text(3),
                      latitude: try row.optionalNumber(4), longitude: try row.optionalNumber(5), score: try row.number(6))
        }
    }

    // MARK: Attributes

    /// Each candidate's values of an attribute, 500 ids per query: the lowest and highest number, and
    /// the lowest and highest text.
    mutating func attributeValues(_ name: String, ids: [Int64]) throws -> [Int64: (low: FilterSortKey, high: FilterSortKey)] {
        var values: [Int64: (low: FilterSortKey, high: FilterSortKey)] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let sql = """
                SELECT item_id, MIN(number), MAX(number), MIN(text), MAX(text) FROM item_attributes
                WHERE name = ? AND item_id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", "))) GROUP BY item_id
                """
            let arguments: StatementArguments = [name] + StatementArguments(chunk)
            if start == 0 { record(sql, arguments) }
            for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
                let low: FilterSortKey = try row.optionalNumber(1).map(FilterSortKey.number) ?? (try row.optionalText(3)).map(FilterSortKey.text) ?? .missing
                let high: FilterSortKey = try row.optionalNumber(2).map(FilterSortKey.number) ?? (try row.optionalText(4)).map(FilterSortKey.text) ?? .missing
                values[try row.integer(0)] = (low, high)
            }
        }
        return values
    }

    /// The page ordered by an attribute (its lowest value ascending, its highest descending; items
    /// without it last), ties by relevance or distance, then in index order.
    mutating func ordered(_ candidates: [Candidate], by order: AttributeOrder) throws -> [Candidate] {
        let values = try attributeValues(order.name, ids: candidates.map(\.id))
        let relevance = request.effectiveSort == .relevance
        func key(_ candidate: Candidate) -> FilterSortKey {
            guard let value = values[candidate.id] else { return .missing }
            return order.descending ? value.high : value.low
        }
        func base(_ candidate: Candidate) -> Double { relevance ? -candidate.score : candidate.distance ?? .infinity }
        let sorted = candidates.sorted { a, b in
            let (x, y) = (key(a), key(b))
            if x != y { return x.precedes(y, descending: order.descending) }
            return (base(a), a.id) < (base(b), b.id)
        }
        guard request.offset < sorted.count else { return [] }
        return try withDetails(Array(sorted[request.offset..<min(sorted.count, needed)]))
    }

    /// How many of `ids` carry each value of an attribute, 500 ids per statement.
    mutating func facet(_ name: String, ids: [Int64]) throws -> Facet {
        var rows: [Row] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let sql = """
                SELECT kind, number, text, COUNT(DISTINCT item_id) FROM item_attributes
                WHERE name = ? AND item_id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", "))) GROUP BY kind, number, text
                """
            let arguments: StatementArguments = [name] + StatementArguments(chunk)
            if start == 0 { record(sql, arguments) }
            rows += try Row.fetchAll(db, sql: sql, arguments: arguments)
        }
        return try Self.facet(name, rows: rows)
    }

    /// A facet over every match of a words-only search, in one statement: FTS5 drives, each match's
    /// attribute rows are read through the (item, name) index and grouped.
    mutating func facet(_ name: String, expression: String) throws -> Facet {
        let filter = entityFilter
        let sql = """
            SELECT a.kind, a.number, a.text, COUNT(DISTINCT i.id) FROM items_fts JOIN items i ON i.id = items_fts.rowid
            JOIN item_attributes a ON a.item_id = i.id AND a.name = ?
            WHERE items_fts MATCH ?\(filter.sql) GROUP BY a.kind, a.number, a.text
            """
        let arguments: StatementArguments = [name, expression] + filter.arguments
        record(sql, arguments)
        return try Self.facet(name, rows: try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments))
    }

    /// Facet values from rows `(kind, number, text, count)`, counts of equal renderings added up.
    static func facet(_ name: String, rows: [Row]) throws -> Facet {
        var counts: [String: Int] = [:]
        for row in rows {
            let value: String
            switch try row.integer(0) {
            case 0: value = try row.optionalText(2) ?? ""
            case 2: value = Date(timeIntervalSinceReferenceDate: try row.optionalNumber(1) ?? 0).formatted(Date.ISO8601FormatStyle())
            default:
                let number = try row.optionalNumber(1) ?? 0
                value = number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            }
            counts[value, default: 0] += Int(try row.integer(3))
        }
        let values = counts.map { Facet.Value(value: $0.key, count: $0.value) }.sorted { ($1.count, $0.value) < ($0.count, $1.value) }
        return Facet(name: name, values: values)
    }

    /// A filter-only search ordered by an attribute, walked in order through the `(name, value)`
    /// indexes and stopped at the page's end: numbers (and dates), then text, then items without the
    /// attribute; an item with several values counts at its first (lowest ascending, highest descending).
    /// Ties come in index order: no tie-break column, so SQLite walks the index and stops (with one, it
    /// sorted every row first: 2 s). (Ordering every match in Swift took over 10 s for `population > 1000`
    /// over 234,908 places.)
    mutating func filtered(in order: AttributeOrder) throws -> [Candidate] {
        let filter = entityFilter
        let direction = order.descending ? "DESC" : "ASC"
        var seen: Set<Int64> = []
        var page: [Candidate] = []
        func collect(_ sql: String, _ arguments: StatementArguments) throws {
            record(sql, arguments)
            let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
            while page.count < needed, let row = try cursor.next() {
                let id = try row.integer(0)
                guard seen.insert(id).inserted else { continue }
                page.append(Candidate(id: id, uri: try row.text(1), entity: try row.text(2), displayName: try row.text(3),
                                      latitude: try row.optionalNumber(4), longitude: try row.optionalNumber(5), score: try row.number(6)))
            }
        }
        let columns = "i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, i.rank"
        for column in ["number", "text"] where page.count < needed {
            try collect("""
                SELECT \(columns) FROM item_attributes s JOIN items i ON i.id = s.item_id
                WHERE s.name = ? AND s.\(column) IS NOT NULL\(filter.sql) ORDER BY s.\(column) \(direction)
                """, [order.name] + filter.arguments)
        }
        if page.count < needed {
            try collect("SELECT \(columns) FROM items i WHERE i.id NOT IN (SELECT item_id FROM item_attributes WHERE name = ?)\(filter.sql) ORDER BY i.id",
                        [order.name] + filter.arguments)
        }
        return Array(page.dropFirst(request.offset))
    }

    // MARK: Text

    mutating func textMatches(expression: String, pagedInSQL: Bool) throws -> [Candidate] {
        let filter = entityFilter
        // A page of the best rows only: the ranking prunes what cannot reach it.
        let keep = request.limit.addingReportingOverflow(request.offset)
        let prunes = pagedInSQL && !keep.overflow && keep.partialValue <= SearchIndex.maximumPrunedPage
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
        return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { row in
            Candidate(id: try row.integer(0), uri: try row.text(1), entity: try row.text(2), displayName: try row.text(3),
                      latitude: try row.optionalNumber(4), longitude: try row.optionalNumber(5), score: -(try row.number(6)), distance: nil)
        }
    }

    /// The matches among `ids` (sorted), scored: one FTS5 scan whose rows outside the set are dropped
    /// before any join or scoring (`searchlight_in_ids`, the set bound as a pointer).
    mutating func textMatches(expression: String, within ids: [Int64]) throws -> [Candidate] {
        guard !ids.isEmpty else { return [] }
        let filter = entityFilter
        let sql = """
            SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, \(SearchIndex.rankFunction) AS score
            FROM items_fts JOIN items i ON i.id = items_fts.rowid
            WHERE items_fts MATCH ?\(filter.sql) AND searchlight_in_ids(items_fts.rowid, ?)
            """
        let arguments: StatementArguments = [phrasePlan, expression] + filter.arguments
        record(sql, arguments + ["(\(ids.count) row ids)"])
        let statement = try db.cachedStatement(sql: sql)
        statement.setUncheckedArguments(arguments)
        return try ids.withUnsafeBufferPointer { buffer in
            var set = searchlight_id_set(ids: buffer.baseAddress, count: buffer.count)
            return try withUnsafePointer(to: &set) { pointer in
                let handle = statement.sqliteStatement, parameter = sqlite3_bind_parameter_count(statement.sqliteStatement)
                let status = searchlight_bind_id_set(handle, parameter, pointer)
                guard status == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: status), message: "cannot bind the row ids") }
                // The cached statement keeps its bindings after a reset: the set must not outlive this scope in it.
                defer { sqlite3_bind_null(handle, parameter) }
                // Fetched while the set lives; GRDB keeps the bindings (no new arguments given).
                return try Row.fetchAll(statement).map { row in
                    Candidate(id: try row.integer(0), uri: try row.text(1), entity: try row.text(2), displayName: try row.text(3),
                              latitude: try row.optionalNumber(4), longitude: try row.optionalNumber(5), score: -(try row.number(6)), distance: nil)
                }
            }
        }
    }

    /// Relevance scores of the given rows that match, one query per 500 rows.
    mutating func textScores(expression: String, ids: [Int64]) throws -> [Int64: Double] {
        var scores: [Int64: Double] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let sql = """
                SELECT items_fts.rowid, \(SearchIndex.rankFunction)
                FROM items_fts JOIN items i ON i.id = items_fts.rowid
                WHERE items_fts MATCH ? AND items_fts.rowid IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))
                """
            let arguments: StatementArguments = [phrasePlan, expression] + StatementArguments(chunk)
            if start == 0 { record(sql, arguments) }
            for row in try Row.fetchAll(db, sql: sql, arguments: arguments) { scores[try row.integer(0)] = -(try row.number(1)) }
        }
        return scores
    }

    mutating func snippet(id: Int64, expression: String) throws -> String? {
        let text = try String.fetchOne(db, sql: "SELECT snippet(items_fts, -1, '[', ']', '…', 12) FROM items_fts WHERE items_fts MATCH ? AND rowid = ?",
                                       arguments: [expression, id])
        return text?.replacingOccurrences(of: SearchIndex.fieldSeparator, with: " · ")
    }

    // MARK: Places

    /// Computes the distance and applies the place filters; nil when the candidate is outside them.
    func refine(_ candidate: Candidate) -> Candidate? {
        var candidate = candidate
        let hasPlace = request.near != nil || request.boundingBox != nil
        guard let latitude = candidate.latitude, let longitude = candidate.longitude else { return hasPlace ? nil : candidate }
        if let box = request.boundingBox, !box.contains(latitude: latitude, longitude: longitude) { return nil }
        if let center = request.near ?? (request.effectiveSort == .distance ? center : nil) {
            candidate.distance = GeoMath.distance(center.latitude, center.longitude, latitude, longitude)
        }
        if let radius = request.radius, let distance = candidate.distance, distance > radius { return nil }
        return candidate
    }

    /// Rows inside the R-tree boxes (a superset: the R-tree rounds outward), entity-filtered.
    /// `details` reads names and URIs too: for a page large enough to be most of what is read (every
    /// hit within a radius), where fetching them for the page in a second pass would cost more.
    mutating func rowsInBoxes(_ boxes: [GeoMath.Box], details: Bool = false) throws -> [Candidate] {
        let filter = entityFilter
        var seen: Set<Int64> = []
        var candidates: [Candidate] = []
        for box in boxes {
            let sql = """
                SELECT i.id, i.latitude, i.longitude\(details ? ", i.uri, i.entity, i.display_name" : "")
                FROM items_geo g JOIN items i ON i.id = g.id
                WHERE g.max_lat >= ? AND g.min_lat <= ? AND g.max_lon >= ? AND g.min_lon <= ?\(filter.sql)
                """
            let arguments: StatementArguments = [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude] + filter.arguments
            record(sql, arguments)
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments(arguments)
            // Stepped through the C API: GRDB's row cursor costs as much per row as the R-tree and join.
            let handle = statement.sqliteStatement
            while try SQLiteCall.step(handle, db: db) {
                let id = sqlite3_column_int64(handle, 0)
                // One box, or boxes split at the antimeridian or a pole, which never share a row.
                if boxes.count > 1 { guard seen.insert(id).inserted else { continue } }
                candidates.append(Candidate(id: id, uri: details ? SQLiteCall.text(handle, 3) : "", entity: details ? SQLiteCall.text(handle, 4) : "",
                                            displayName: details ? SQLiteCall.text(handle, 5) : "",
                                            latitude: SQLiteCall.optionalDouble(handle, 1), longitude: SQLiteCall.optionalDouble(handle, 2)))
            }
        }
        return candidates
    }

    /// The R-tree boxes of the region the request allows: the circle of `radius` intersected with the box.
    func regionBoxes(radius: Double?) -> [GeoMath.Box] {
        var circle: [GeoMath.Box]? = nil
        if let center = request.near ?? center, let radius { circle = GeoMath.boxes(around: center, radius: radius) }
        let boxes = request.boundingBox.map(GeoMath.boxes(of:))
        switch (circle, boxes) {
        case (let circle?, let boxes?):
            return circle.flatMap { a in boxes.compactMap { b in
                let box = GeoMath.Box(minLatitude: max(a.minLatitude, b.minLatitude), maxLatitude: min(a.maxLatitude, b.maxLatitude),
                                      minLongitude: max(a.minLongitude, b.minLongitude), maxLongitude: min(a.maxLongitude, b.maxLongitude))
                return box.minLatitude <= box.maxLatitude && box.minLongitude <= box.maxLongitude ? box : nil
            } }
        case (let circle?, nil): return circle
        case (nil, let boxes?): return boxes
        case (nil, nil): return [GeoMath.Box(minLatitude: -90, maxLatitude: 90, minLongitude: -180, maxLongitude: 180)]
        }
    }

    mutating func countInRegion(cap: Int, radius: Double?) throws -> Int {
        var total = 0
        for box in regionBoxes(radius: radius) {
            total += try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM (SELECT 1 FROM items_geo WHERE max_lat >= ? AND min_lat <= ? AND max_lon >= ? AND min_lon <= ? LIMIT ?)"),
                                      arguments: [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude, cap]) ?? 0
            if total >= cap { break }
        }
        return total
    }

    /// How `nearest` narrows places down to text matches.
    enum TextFilter {
        /// No text: places only.
        case none
        /// Probe FTS5 for each place (few places).
        case probe(String)
        /// Scan FTS5 once, keeping and scoring only the places' rows.
        case intersect(String)
    }

    /// Nearest-first search driven by the R-tree: circles of growing radius around the reference
    /// point until enough hits lie inside (everything inside a circle of radius r is nearer than
    /// anything outside it), or the circle covers the allowed region.
    mutating func nearest(textFilter: TextFilter) throws -> [Candidate] {
        guard center != nil else { return [] }
        let limit = request.radius ?? GeoMath.maximumDistance
        let located = max(1, try estimatedItemCount())
        // Start where a uniform spread would put 4 × needed points, and grow ×4 each round; places alone
        // around a point start an eighth of that and grow ×2: places crowd (a circle of 83 km around Paris holds 20,000 of
        // GeoNames' places four times over, where 10 were wanted), and a round over a few rows costs
        // little more than its R-tree descent, so overshooting the area is what costs.
        let earthArea = 4 * Double.pi * GeoMath.earthRadius * GeoMath.earthRadius
        let wanted = Double(min(needed, located)) * 4
        var placesAlone = request.boundingBox == nil
        if case .none = textFilter {} else { placesAlone = false }
        let uniform = sqrt(wanted / Double(located) * earthArea / .pi)
        var radius = min(limit, placesAlone ? max(500, uniform / 8) : max(1_000, uniform))
        let growth = placesAlone ? 2.0 : 4.0
        // A radius within reach of the first circle or two is read at once: a round costs a statement.
        if radius * growth * growth >= limit { radius = limit }
        // Without a distance order, every hit in the region is needed: go straight to the limit.
        if request.effectiveSort != .distance || needed == Int.max { radius = limit }
        // A box holding few places is read once rather than through growing circles.
        if request.boundingBox != nil, request.radius == nil, try countInRegion(cap: 2_001, radius: nil) <= 2_000 { radius = limit }
        while true {
            var hits: [Candidate]
            switch textFilter {
            case .none:
                // Unpaged (a count, facets), only ids are needed.
                hits = try rowsInBoxes(regionBoxes(radius: radius), details: needed > 1_000 && needed != Int.max).compactMap(refine)
            case .probe(let expression):
                hits = try rowsInBoxes(regionBoxes(radius: radius)).compactMap(refine)
                let scores = try textScores(expression: expression, ids: hits.map(\.id))
                hits = hits.compactMap { hit in scores[hit.id].map { var hit = hit; hit.score = $0; return hit } }
            case .intersect(let expression):
                // One FTS5 scan keeps the rows of the region: only those are joined and scored.
                let ids = try idsInBoxes(regionBoxes(radius: radius)).sorted()
                hits = try textMatches(expression: expression, within: ids).compactMap(refine)
            }
            hits = hits.filter { ($0.distance ?? 0) <= radius }
            if hits.count >= needed || radius >= limit { return hits }
            radius = min(limit, radius * growth)
        }
    }

    /// Row ids inside the R-tree boxes, without touching the items table.
    mutating func idsInBoxes(_ boxes: [GeoMath.Box]) throws -> [Int64] {
        var ids: [Int64] = []
        let sql = "SELECT id FROM items_geo WHERE max_lat >= ? AND min_lat <= ? AND max_lon >= ? AND min_lon <= ?"
        for box in boxes {
            let arguments: StatementArguments = [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude]
            record(sql, arguments)
            ids += try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
        }
        return ids
    }

    /// Items by id, entity-filtered, 500 per query.
    mutating func rows(ids: [Int64]) throws -> [Candidate] {
        let filter = entityFilter
        var candidates: [Candidate] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let sql = "SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude FROM items i WHERE i.id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))\(filter.sql)"
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
        let relevance = request.effectiveSort == .relevance
        func key(_ candidate: Candidate) -> Double { relevance ? -candidate.score : candidate.distance ?? .infinity }
        // Candidates read with their URIs (every hit within a radius) are sorted once, ties by URI.
        let complete = candidates.allSatisfy { !$0.uri.isEmpty }
        let sorted = candidates.sorted { complete ? (key($0), $0.uri) < (key($1), $1.uri) : (key($0), $0.id) < (key($1), $1.id) }
        guard request.offset < sorted.count else { return [] }
        let end = min(sorted.count, needed)
        if complete { return Array(sorted[request.offset..<end]) }
        var low = request.offset, high = end - 1
        while low > 0 && key(sorted[low - 1]) == key(sorted[request.offset]) { low -= 1 }
        while high + 1 < sorted.count && key(sorted[high + 1]) == key(sorted[end - 1]) { high += 1 }
        let window = try withDetails(Array(sorted[low...high])).sorted { (key($0), $0.uri) < (key($1), $1.uri) }
        return Array(window[(request.offset - low)..<(end - low)])
    }
}

/// One item's value of a sort attribute: numbers (and dates) before text, a missing value after both.
enum FilterSortKey: Hashable {
    case number(Double)
    case text(String)
    case missing

    /// Whether this key comes first in the order (missing values last either way).
    func precedes(_ other: FilterSortKey, descending: Bool) -> Bool {
        switch (self, other) {
        case (.missing, _): return false
        case (_, .missing): return true
        case (.number(let a), .number(let b)): return descending ? a > b : a < b
        case (.text(let a), .text(let b)):
            let (x, y) = (Array(a.utf8), Array(b.utf8))
            return descending ? y.lexicographicallyPrecedes(x) : x.lexicographicallyPrecedes(y)
        case (.number, .text): return true
        case (.text, .number): return false
        }
    }
}
