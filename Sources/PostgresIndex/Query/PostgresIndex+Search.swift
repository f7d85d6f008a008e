#if PostgreSQL
import CSearchTokenizer
import Foundation
import PostgresNIO
import SearchIndex
import Synchronization

extension PostgresIndex {
    /// Runs a search: the same request, the same hits in the same order, the same scores and distances
    /// as the SQLite index holding the same items.
    ///
    /// PostgreSQL narrows the rows down (GIN for the words, GiST for the place) and hands back, per row,
    /// the positions of the query's lexemes; Searchlight decides the match and the score from them with the
    /// SQLite index's own scoring code, then orders and pages.
    public func search(_ request: SearchRequest) async throws(PostgresIndexError) -> SearchResults {
        try await search(request, log: nil)
    }

    /// Runs a search and reports how it ran: each statement, with PostgreSQL's plan for it.
    public func explain(_ request: SearchRequest) async throws(PostgresIndexError) -> SearchExplanation {
        let log = StatementLog()
        let results = try await search(request, log: log)
        var statements: [SearchExplanation.Statement] = []
        for statement in log.statements {
            let plan = try await rows("EXPLAIN " + statement.sql, statement.bindings).map { row throws(PostgresIndexError) in
                try Self.decode(row, as: String.self)
            }
            statements.append(.init(sql: statement.sql, arguments: "[" + statement.arguments.joined(separator: ", ") + "]", queryPlan: plan))
        }
        return SearchExplanation(parsedQuery: results.parsedQuery, expression: results.parsedQuery.flatMap { TextQuery($0).tsquery }, expressionLanguage: .tsquery,
                                 plan: results.plan, statements: statements, hitCount: results.hits.count)
    }

    /// A search, its statements recorded in `log` when one is given.
    ///
    /// As the SQLite index: typo expansions are looked for once, and only when needed. Exact matches
    /// rank above every typo match and score as they would alone, so a page they fill is the page; an
    /// order by attribute or distance, facets and the total need every match, typo matches included.
    func search(_ request: SearchRequest, log: StatementLog?) async throws(PostgresIndexError) -> SearchResults {
        if request.snippets { throw .unsupported("snippets", instead: "search without --snippets, or use an SQLite index") }
        // Filters, orders, facets and typos read the tables schema 3 added.
        let schema = openedSchema.load(ordering: .relaxed)
        if schema < Self.schemaVersion { throw .schemaTooOld(found: schema, needed: Self.schemaVersion) }
        let typed: ParsedQuery?
        do { typed = try SearchIndex.validate(request) } catch { throw .search(error) }
        var request = request
        let predicate = try await predicate(of: request)
        if !request.exactEntities && !request.entities.isEmpty {
            request.entities = SearchIndex.entitiesOfKind(request.entities, checkpoints: try await checkpoints())
        }
        let matched = try await PostgresSearch.matchedTexts(in: predicate, index: self, log: log)
        let search = PostgresSearch(index: self, request: request, log: log, predicate: predicate, matched: matched)
        var parsed = typed
        let tolerant = request.typoTolerance && typed?.mayMatchWithTypos == true
        let lazily = request.effectiveSort == .relevance && request.sortAttribute == nil && request.facets.isEmpty && !request.countsTotal
        var results: SearchResults
        if let typed, tolerant, lazily {
            results = try await search.run(typed)
            if results.hits.count < request.limit {
                parsed = try await search.expanded(typed)
                if parsed?.hasExpansions == true { results = try await search.run(parsed) }
            }
        } else {
            if let typed, tolerant { parsed = try await search.expanded(typed) }
            results = try await search.run(parsed)
        }
        if results.hits.isEmpty, request.offset == 0, let parsed, let query = request.query {
            results.suggestion = try await search.suggestion(for: parsed, query: query)
        }
        return results
    }

    /// The request's filter, parsed, with the attributes it, its order and its facets name checked
    /// against those the index has (as the SQLite index checks them).
    func predicate(of request: SearchRequest) async throws(PostgresIndexError) -> FilterPredicate? {
        guard request.sortAttribute != nil || !request.facets.isEmpty || request.filter != nil else { return nil }
        let known = try await attributeNames()
        do { return try SearchIndex.predicate(of: request, knownAttributes: known) } catch { throw .search(error) }
    }

    /// The names of the attributes items carry: a skip-scan of the `(name, number)` index, one probe per
    /// distinct name.
    public func attributeNames() async throws(PostgresIndexError) -> Set<String> {
        let names = try await rows("""
            WITH RECURSIVE names(name) AS (
                (SELECT name FROM searchlight_attributes ORDER BY name LIMIT 1)
                UNION ALL
                SELECT (SELECT a.name FROM searchlight_attributes a WHERE a.name > n.name ORDER BY a.name LIMIT 1) FROM names n WHERE n.name IS NOT NULL
            )
            SELECT name FROM names WHERE name IS NOT NULL
            """).map { row throws(PostgresIndexError) in try Self.decode(row, as: String.self) }
        return Set(names)
    }
}

/// One search on PostgreSQL in progress.
struct PostgresSearch {
    typealias Candidate = SearchCandidate

    /// A region the rows must fall in: a circle (prefiltered by the GiST index, refined exactly) or a box.
    enum Region {
        case circle(center: Coordinate, radius: Double)
        case box(BoundingBox)
        case both(center: Coordinate, radius: Double, box: BoundingBox)
    }

    /// A row that matched: its candidate, and its values of the attributes the search reads.
    struct Match {
        var candidate: Candidate
        var attributes: [String: [FilterValue]] = [:]
    }

    let index: PostgresIndex
    let request: SearchRequest
    /// Where an explained search records its statements.
    let log: StatementLog?
    /// The request's filter, parsed and checked.
    let predicate: FilterPredicate?
    /// The texts each `MATCHES` comparison of the filter keeps, when they could be read.
    let matched: [MatchesKey: [String]]
    /// Whether the filter's SQL decides it exactly; otherwise each row is checked in Swift too.
    let filterIsExact: Bool
    /// The attributes whose values each row brings: the filter's (when its SQL is not exact), the
    /// order's and the facets'.
    let attributeNames: [String]

    init(index: PostgresIndex, request: SearchRequest, log: StatementLog?, predicate: FilterPredicate?, matched: [MatchesKey: [String]]) {
        self.index = index
        self.request = request
        self.log = log
        self.predicate = predicate
        self.matched = matched
        var scratch = StatementParameters()
        filterIsExact = predicate.map { Self.condition($0, matched: matched, parameters: &scratch).exact } ?? true
        var names = Set(request.facets)
        if let order = request.sortAttribute { names.insert(order.name) }
        if let predicate, !filterIsExact { names.formUnion(predicate.attributes) }
        attributeNames = names.sorted()
    }

    var needed: Int { request.offset.addingReportingOverflow(request.limit).overflow ? Int.max : request.offset + request.limit }
    var center: Coordinate? { request.near ?? request.boundingBox?.center }

    /// The request's bounded region, if any.
    var region: Region? {
        switch (request.near, request.radius, request.boundingBox) {
        case (let center?, let radius?, let box?): return .both(center: center, radius: radius, box: box)
        case (let center?, let radius?, nil): return .circle(center: center, radius: radius)
        case (_, _, let box?): return .box(box)
        default: return nil
        }
    }

    /// Runs the search for a parsed query (with its typo expansions, if any): every match, then the page,
    /// the total and the facets from them.
    func run(_ parsed: ParsedQuery?) async throws(PostgresIndexError) -> SearchResults {
        let matches: [Match]
        let plan: SearchPlan
        // A nearest search reads growing circles until the page is full: its total and facets need every match.
        var nearest = false
        var text: TextQuery?
        var scorer: OpaquePointer?
        defer { if let scorer { searchlight_scorer_free(scorer) } }
        let spatial = request.near != nil || request.boundingBox != nil
        if let parsed {
            let query = TextQuery(parsed)
            guard query.tsquery != nil else {
                var empty = SearchResults(hits: [], plan: .text, parsedQuery: parsed)
                if request.countsTotal { empty.total = 0 }
                empty.facets = request.facets.map { Facet($0, groups: []) }
                return empty
            }
            let made = try await self.scorer(for: query)
            (text, scorer) = (query, made)
            if !spatial {
                (matches, plan) = (try await rows(text: query, scorer: made, place: nil), .text)
            } else if request.effectiveSort == .distance && request.radius == nil && request.boundingBox == nil {
                (matches, plan, nearest) = (try await self.nearest(text: query, scorer: made), .intersection, true)
            } else {
                (matches, plan) = (try await rows(text: query, scorer: made, place: region), .textThenPlace)
            }
        } else if !spatial {
            // A filter PostgreSQL decides exactly is ordered and paged there; the total and facets need every item.
            let paged = filterIsExact && request.facets.isEmpty
            if paged, let order = request.sortAttribute {
                (matches, plan) = (try await filtered(in: order), .filter)
            } else {
                (matches, plan) = (try await rows(text: nil, scorer: nil, place: nil, walk: paged ? Walk(limit: needed) : nil), .filter)
            }
            if paged && request.countsTotal {
                var results = SearchResults(hits: page(of: matches).map { $0.hit(ranked: false) }, plan: plan, parsedQuery: nil)
                results.total = try await count(locatedOnly: false)
                return results
            }
        } else if request.radius == nil && request.boundingBox == nil {
            (matches, plan, nearest) = (try await self.nearest(text: nil, scorer: nil), .nearest, true)
        } else {
            (matches, plan) = (try await rows(text: nil, scorer: nil, place: region), .nearest)
        }
        // Typos are folded into the score as penalties, as searchlight_rank does; a hit reports them apart.
        var results = SearchResults(hits: page(of: matches).map { $0.hit(ranked: parsed != nil) }, plan: plan, parsedQuery: parsed)
        if request.countsTotal || !request.facets.isEmpty {
            var all = matches
            if nearest, matches.count >= needed, let center {
                // Without words, every located item the filter keeps is a match: counted in SQL when it decides the filter.
                if text == nil && filterIsExact && request.facets.isEmpty {
                    results.total = try await count(locatedOnly: true)
                    return results
                }
                all = try await rows(text: text, scorer: scorer, place: .circle(center: center, radius: Coordinate.maximumDistance))
            }
            if request.countsTotal { results.total = all.count }
            results.facets = request.facets.map { name in Self.facet(name, of: all) }
        }
        return results
    }

    /// The requested page: by the attribute ordered by (its lowest value ascending, its highest
    /// descending, items without it last), ties by relevance or distance, then URI; otherwise by
    /// relevance or distance, ties by URI.
    func page(of matches: [Match]) -> [Candidate] {
        guard let order = request.sortAttribute else { return request.page(of: matches.map(\.candidate)) }
        let keyed = matches.map { (key: FilterSortKey($0.attributes[order.name] ?? [], descending: order.descending), candidate: $0.candidate) }
        let base = request.orderKey
        let sorted = keyed.sorted { a, b in
            if a.key != b.key { return a.key.precedes(b.key, descending: order.descending) }
            let (x, y) = (base(a.candidate), base(b.candidate))
            return x != y ? x < y : BinaryCollation.precedes(a.candidate.uri, b.candidate.uri)
        }
        guard request.offset < sorted.count else { return [] }
        return sorted[request.offset..<min(sorted.count, needed)].map(\.candidate)
    }

    /// How many matches carry each value of an attribute (an item counted once per distinct value).
    static func facet(_ name: String, of matches: [Match]) -> Facet {
        // Texts grouped by their bytes, as SQLite's GROUP BY does (String's == would merge `é` and `e\u{301}`).
        struct Group: Hashable { var kind: Int, number: Double?, text: [UInt8]? }
        var counts: [Group: Int] = [:]
        for match in matches {
            let groups = Set((match.attributes[name] ?? []).map { Group(kind: $0.kindCode, number: $0.numberColumn, text: $0.textColumn.map { Array($0.utf8) }) })
            for group in groups { counts[group, default: 0] += 1 }
        }
        return Facet(name, groups: counts.map { group, items in
            (kind: group.kind, number: group.number, text: group.text.map { String(decoding: $0, as: UTF8.self) }, items: items)
        })
    }

    /// A scorer with the query's statistics: rows, each column's average positions, each phrase's rows.
    func scorer(for text: TextQuery) async throws(PostgresIndexError) -> OpaquePointer {
        let statistics = try await query("""
            SELECT coalesce(sum(items), 0)::bigint, coalesce(sum(name_positions), 0)::bigint, coalesce(sum(title_positions), 0)::bigint,
                   coalesce(sum(text_positions), 0)::bigint, coalesce(sum(keyword_positions), 0)::bigint
            FROM searchlight_stores
            """).first.map { row throws(PostgresIndexError) in try PostgresIndex.decode(row, as: (Int64, Int64, Int64, Int64, Int64).self) }
            ?? (Int64(0), Int64(0), Int64(0), Int64(0), Int64(0))
        let rows = statistics.0
        let totals = [statistics.1, statistics.2, statistics.3, statistics.4]
        // As FTS5's xColumnTotalSize over xRowCount.
        let averages = totals.map { total in rows > 0 && total > 0 ? Double(total) / Double(rows) : 1.0 }
        // Each phrase's rows, counted in one pass over the rows holding any of them.
        var frequencies = [Double](repeating: 0, count: text.phrases.count)
        let queries = text.phrases.map(TextQuery.tsquery(of:))
        let present = queries.enumerated().compactMap { index, query in query.map { (index, $0) } }
        if !present.isEmpty {
            var parameters = StatementParameters()
            let counts = present.map { _, query in "count(*) FILTER (WHERE terms @@ \(parameters.add(query))::tsquery)" }
            let any = parameters.add("(" + present.map(\.1).joined(separator: ") | (") + ")")
            let sql = "SELECT \(counts.joined(separator: ", ")) FROM searchlight_items WHERE terms @@ \(any)::tsquery"
            if let row = try await query(sql, parameters).first {
                let cells = row.makeRandomAccess()
                for (slot, (phrase, _)) in present.enumerated() {
                    do { frequencies[phrase] = Double(try cells[slot].decode(Int64.self)) } catch { throw PostgresIndex.mapped(error) }
                }
            }
        }
        let sizes = text.phrases.map { Int32($0.tokens.count) }
        let made = sizes.withUnsafeBufferPointer { sizes in
            frequencies.withUnsafeBufferPointer { frequencies in
                averages.withUnsafeBufferPointer { averages in
                    searchlight_scorer_create(Int32(text.phrases.count), sizes.baseAddress, frequencies.baseAddress, rows, averages.baseAddress, text.plan)
                }
            }
        }
        guard let made else { throw .server(message: "out of memory for the ranking", sqlState: nil) }
        return made
    }

    /// The number of items (with a place, with `locatedOnly`) the filter keeps, when its SQL is exact.
    func count(locatedOnly: Bool) async throws(PostgresIndexError) -> Int {
        var parameters = StatementParameters()
        var conditions: [String] = locatedOnly ? ["i.place IS NOT NULL"] : []
        if !request.entities.isEmpty { conditions.append("i.entity = ANY(\(parameters.add(request.entities))::text[])") }
        if let predicate { conditions.append(Self.condition(predicate, matched: matched, parameters: &parameters).sql) }
        let sql = "SELECT count(*) FROM searchlight_items i" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
        return try await query(sql, parameters).first.map { row throws(PostgresIndexError) -> Int in
            let count: Int64 = try PostgresIndex.decode(row, as: Int64.self)
            return Int(count)
        } ?? 0
    }

    /// How the filter plan reads rows in the page's order and stops: what drives the statement (the items,
    /// or an attribute's rows through its `(name, value)` index), its extra conditions, its order.
    struct Walk {
        var from = "searchlight_items i"
        var conditions: [String] = []
        var order = ""
        var limit: Int
    }

    /// The filter plan ordered by an attribute, walked in order through the `(name, number)` and
    /// `(name, text)` indexes and stopped at the page's end, as the SQLite index walks it: numbers (and
    /// dates), then text, then items without the attribute; an item with several values counts at its
    /// first (lowest ascending, highest descending). Unlike SQLite's walk (index order), equal values come
    /// by static rank, then URI: PostgreSQL sorts each run of equal values as the walk meets it.
    func filtered(in order: AttributeOrder) async throws(PostgresIndexError) -> [Match] {
        let direction = order.descending ? "DESC" : "ASC"
        let tieOrder = (request.effectiveSort == .relevance ? "i.rank DESC, " : "") + "i.uri COLLATE \"C\""
        var page: [Match] = []
        var seen = Set<String>()
        for column in ["number", "text"] where page.count < needed {
            // An item holds a few values at most: rows are read a page (and more) at a time until `needed` items came.
            var limit = needed
            while true {
                var walk = Walk(from: "searchlight_attributes s JOIN searchlight_items i ON i.uri = s.uri", limit: limit)
                walk.conditions = ["s.name = $NAME", "s.\(column) IS NOT NULL"]
                if column == "text" { walk.conditions.append("NOT EXISTS (SELECT 1 FROM searchlight_attributes n WHERE n.uri = i.uri AND n.name = $NAME AND n.number IS NOT NULL)") }
                walk.order = "s.\(column) \(direction), " + tieOrder
                let rows = try await self.rows(text: nil, scorer: nil, place: nil, walk: walk, walkName: order.name)
                var found: [Match] = []
                var ids = seen
                for row in rows where ids.insert(row.candidate.uri).inserted { found.append(row) }
                if page.count + found.count >= needed || rows.count < limit {
                    page += found
                    seen = ids
                    break
                }
                limit = limit.multipliedReportingOverflow(by: 4).overflow ? Int.max : limit * 4
            }
        }
        if page.count < needed {
            var walk = Walk(limit: needed - page.count)
            walk.conditions = ["NOT EXISTS (SELECT 1 FROM searchlight_attributes n WHERE n.uri = i.uri AND n.name = $NAME)"]
            walk.order = tieOrder
            page += try await rows(text: nil, scorer: nil, place: nil, walk: walk, walkName: order.name)
        }
        return page
    }

    /// Every row matching the words (if any) inside the region (if any) that the filter keeps, refined
    /// and scored (a row without words scores its static rank, as the SQLite index's filter plan). With
    /// a `walk` (the filter plan, its filter exact in SQL), only its first rows in its order; `$NAME` in
    /// its conditions stands for `walkName`.
    func rows(text: TextQuery?, scorer: OpaquePointer?, place: Region?, walk: Walk? = nil, walkName: String = "") async throws(PostgresIndexError) -> [Match] {
        var parameters = StatementParameters()
        var conditions: [String] = []
        var columns = "i.uri, i.entity, i.display_name, i.latitude, i.longitude, i.rank, i.value_lengths, i.name_positions, i.title_positions, i.text_positions, i.keyword_positions"
        var from = walk?.from ?? "searchlight_items i"
        if let walk, !walk.conditions.isEmpty {
            let name = walk.conditions.contains { $0.contains("$NAME") } ? parameters.add(walkName) : ""
            conditions += walk.conditions.map { $0.replacingOccurrences(of: "$NAME", with: name) }
        }
        if let text, let tsquery = text.tsquery {
            conditions.append("i.terms @@ \(parameters.add(tsquery))::tsquery")
            let exact = parameters.add(text.exactLexemes), prefixes = parameters.add(text.prefixes)
            from += """
                 CROSS JOIN LATERAL (
                    SELECT array_agg(u.lexeme) AS lexemes, array_agg(array_to_string(u.positions, ',')) AS positions,
                           array_agg(array_to_string(u.weights, '')) AS weights
                    FROM unnest(i.terms) u
                    WHERE u.lexeme = ANY(\(exact)::text[]) OR EXISTS (SELECT 1 FROM unnest(\(prefixes)::text[]) p WHERE starts_with(u.lexeme, p))
                ) m
                """
            columns += ", m.lexemes, m.positions, m.weights"
        } else {
            columns += ", NULL::text[], NULL::text[], NULL::text[]"
        }
        if attributeNames.isEmpty {
            columns += ", NULL::text[], NULL::int2[], NULL::float8[], NULL::text[]"
        } else {
            // Numbers and texts as arrays without NULLs: the kind tells which of the two a value is.
            from += """
                 LEFT JOIN LATERAL (
                    SELECT array_agg(a.name) AS names, array_agg(a.kind) AS kinds, array_agg(coalesce(a.number, 0)) AS numbers,
                           array_agg(coalesce(a.text, '')) AS texts
                    FROM searchlight_attributes a WHERE a.uri = i.uri AND a.name = ANY(\(parameters.add(attributeNames))::text[])
                ) v ON true
                """
            columns += ", v.names, v.kinds, v.numbers, v.texts"
        }
        if !request.entities.isEmpty { conditions.append("i.entity = ANY(\(parameters.add(request.entities))::text[])") }
        if let predicate { conditions.append(Self.condition(predicate, matched: matched, parameters: &parameters).sql) }
        switch place {
        case .circle(let center, let radius)?:
            conditions.append(Self.circleCondition(center: center, radius: radius, parameters: &parameters))
        case .box(let box)?:
            conditions.append(Self.boxCondition(box, parameters: &parameters))
        case .both(let center, let radius, let box)?:
            conditions.append(Self.circleCondition(center: center, radius: radius, parameters: &parameters))
            conditions.append(Self.boxCondition(box, parameters: &parameters))
        case nil:
            break
        }
        var sql = "SELECT \(columns) FROM \(from)" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
        if let walk {
            // As ``page(of:)`` orders the filter plan: by static rank for relevance, then by URI.
            let order = walk.order.isEmpty ? (request.effectiveSort == .relevance ? "i.rank DESC, " : "") + "i.uri COLLATE \"C\"" : walk.order
            sql += " ORDER BY \(order) LIMIT \(parameters.add(Int64(clamping: walk.limit)))"
        }
        var matches: [Match] = []
        var patterns = MatchesPatterns()
        for row in try await query(sql, parameters) {
            let (uri, entity, name, latitude, longitude, rank, lengths, namePositions, titlePositions, textPositions, keywordPositions, lexemes, positions, weights,
                 names, kinds, numbers, texts) =
                try PostgresIndex.decode(row, as: (String, String, String, Double?, Double?, Double, String, Int32, Int32, Int32, Int32,
                                                   [String]?, [String]?, [String]?, [String]?, [Int16]?, [Double]?, [String]?).self)
            // Rows are told apart by URI here: there is no row id to carry.
            // Without words or a place (the filter plan), an item scores its static rank, as in the SQLite index.
            var match = Match(candidate: Candidate(id: 0, uri: uri, entity: entity, displayName: name, latitude: latitude, longitude: longitude,
                                                   score: text == nil && place == nil ? rank : 0))
            if let names, let kinds, let numbers, let texts {
                for (slot, name) in names.enumerated() where slot < kinds.count && slot < numbers.count && slot < texts.count {
                    let value: FilterValue = switch kinds[slot] {
                    case 0: .string(texts[slot])
                    case 2: .date(Date(timeIntervalSinceReferenceDate: numbers[slot]))
                    default: .number(numbers[slot])
                    }
                    match.attributes[name, default: []].append(value)
                }
            }
            if let predicate, !filterIsExact, !predicate.isSatisfied(by: match.attributes, patterns: &patterns) { continue }
            if let text, let scorer {
                let terms = TextQuery.RowTerms(lexemes: lexemes ?? [], positions: positions ?? [], weights: weights ?? [])
                let vectorSizes = [Int(namePositions), Int(titlePositions), Int(textPositions), Int(keywordPositions)]
                guard let instances = text.instances(in: terms, columnSizes: vectorSizes) else { continue }
                match.candidate.score = try Self.score(instances, lengths: lengths, rank: rank, vectorSizes: vectorSizes, scorer: scorer)
            }
            guard let refined = refine(match.candidate) else { continue }
            match.candidate = refined
            matches.append(match)
        }
        return matches
    }

    /// The row's score from its instances, by the SQLite index's ranking.
    static func score(_ instances: [searchlight_instance], lengths: String, rank: Double, vectorSizes: [Int], scorer: OpaquePointer) throws(PostgresIndexError) -> Double {
        var sizes = [Int32](repeating: 0, count: Int(SEARCHLIGHT_RANK_COLUMNS))
        let sized = sizes.withUnsafeMutableBufferPointer { searchlight_value_lengths_sizes(lengths, $0.baseAddress) }
        if sized == 0 {
            for column in 0..<min(sizes.count, vectorSizes.count) { sizes[column] = Int32(clamping: vectorSizes[column]) }
        }
        var score = 0.0
        let status = instances.withUnsafeBufferPointer { instances in
            sizes.withUnsafeBufferPointer { sizes in
                SearchIndex.columnWeights.withUnsafeBufferPointer { weights in
                    searchlight_scorer_score(scorer, instances.baseAddress, Int32(instances.count), sizes.baseAddress, sized, lengths, rank,
                                             weights.baseAddress, &score)
                }
            }
        }
        guard status == 0 else { throw .server(message: "out of memory for the ranking", sqlState: nil) }
        return score
    }

    /// The nearest rows to the center (with the words, if any): circles of growing radius until one holds
    /// the page, every row within it refined exactly, so no nearer row is ever missed.
    func nearest(text: TextQuery?, scorer: OpaquePointer?) async throws(PostgresIndexError) -> [Match] {
        guard let center else { return [] }
        var radius = 10_000.0
        while true {
            let within = try await rows(text: text, scorer: scorer, place: .circle(center: center, radius: radius))
            if within.count >= needed || radius >= Coordinate.maximumDistance { return within }
            radius = min(radius * 4, Coordinate.maximumDistance)
        }
    }

    /// A circle as a GiST-indexed `ST_DWithin` on the sphere, a little wider than the circle: refinement
    /// with Searchlight's own great-circle distance decides (PostGIS's sphere is not exactly the same).
    static func circleCondition(center: Coordinate, radius: Double, parameters: inout StatementParameters) -> String {
        guard radius < Coordinate.maximumDistance else { return "i.place IS NOT NULL" }
        let widened = radius * (1 + 1e-6) + 1
        return "ST_DWithin(i.place, ST_SetSRID(ST_MakePoint(\(parameters.add(center.longitude)), \(parameters.add(center.latitude))), 4326)::geography, \(parameters.add(widened)), false)"
    }

    /// A box on the exact coordinates (a box across the antimeridian is two ranges of longitude).
    static func boxCondition(_ box: BoundingBox, parameters: inout StatementParameters) -> String {
        let latitude = "i.latitude BETWEEN \(parameters.add(box.minLatitude)) AND \(parameters.add(box.maxLatitude))"
        let longitude = box.crossesAntimeridian
            ? "(i.longitude >= \(parameters.add(box.minLongitude)) OR i.longitude <= \(parameters.add(box.maxLongitude)))"
            : "i.longitude BETWEEN \(parameters.add(box.minLongitude)) AND \(parameters.add(box.maxLongitude))"
        return "(\(latitude) AND \(longitude))"
    }

    /// Runs one of the search's statements, recording it when the search is explained.
    func query(_ sql: String, _ parameters: StatementParameters = StatementParameters()) async throws(PostgresIndexError) -> [PostgresRow] {
        log?.record(.init(sql: sql, bindings: parameters.bindings, arguments: parameters.arguments))
        return try await index.rows(sql, parameters.bindings)
    }

    /// Computes the distance and applies the place filters exactly, as the SQLite index does; nil when the
    /// candidate is outside them.
    func refine(_ candidate: Candidate) -> Candidate? {
        guard let distance = request.placement(latitude: candidate.latitude, longitude: candidate.longitude) else { return nil }
        var candidate = candidate
        candidate.distance = distance
        return candidate
    }

}

/// A statement's parameters as they are added: their bindings, and their text for `explain`.
struct StatementParameters {
    var bindings = PostgresBindings()
    var arguments: [String] = []

    /// Binds a value; returns its placeholder (`$3`).
    mutating func add<Value: PostgresNonThrowingEncodable & Sendable>(_ value: Value) -> String {
        bindings.append(value)
        arguments.append("\(value)")
        return "$\(bindings.count)"
    }
}

/// The statements an explained search ran, in order.
final class StatementLog: Sendable {
    struct Statement: Sendable {
        var sql: String
        var bindings: PostgresBindings
        var arguments: [String]
    }

    private let recorded = Mutex<[Statement]>([])

    func record(_ statement: Statement) { recorded.withLock { $0.append(statement) } }

    var statements: [Statement] { recorded.withLock { $0 } }
}
#endif
