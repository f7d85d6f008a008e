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
    func search(_ request: SearchRequest, log: StatementLog?) async throws(PostgresIndexError) -> SearchResults {
        if request.filter != nil { throw .unsupported("--where filters") }
        if request.sortAttribute != nil { throw .unsupported("ordering by an attribute") }
        if !request.facets.isEmpty { throw .unsupported("facets") }
        if request.snippets { throw .unsupported("snippets") }
        let parsed: ParsedQuery?
        do { parsed = try SearchIndex.validate(request) } catch { throw .search(error) }
        var request = request
        if !request.exactEntities && !request.entities.isEmpty {
            request.entities = SearchIndex.entitiesOfKind(request.entities, checkpoints: try await checkpoints())
        }
        let search = PostgresSearch(index: self, request: request, log: log)
        let candidates: [SearchCandidate]
        let plan: SearchPlan
        // A nearest search reads growing circles until the page is full: its total needs every match.
        var nearest = false
        var text: TextQuery?
        var scorer: OpaquePointer?
        defer { if let scorer { searchlight_scorer_free(scorer) } }
        if let parsed {
            let query = TextQuery(parsed)
            guard query.tsquery != nil else {
                var empty = SearchResults(hits: [], plan: .text, parsedQuery: parsed)
                if request.countsTotal { empty.total = 0 }
                return empty
            }
            let made = try await search.scorer(for: query)
            (text, scorer) = (query, made)
            if request.near == nil && request.boundingBox == nil {
                (candidates, plan) = (try await search.rows(text: query, scorer: made, place: nil), .text)
            } else if request.effectiveSort == .distance && request.radius == nil && request.boundingBox == nil {
                (candidates, plan, nearest) = (try await search.nearest(text: query, scorer: made), .intersection, true)
            } else {
                (candidates, plan) = (try await search.rows(text: query, scorer: made, place: search.region), .textThenPlace)
            }
        } else if request.radius == nil && request.boundingBox == nil {
            (candidates, plan, nearest) = (try await search.nearest(text: nil, scorer: nil), .nearest, true)
        } else {
            (candidates, plan) = (try await search.rows(text: nil, scorer: nil, place: search.region), .nearest)
        }
        let page = request.page(of: candidates)
        // The SQLite index looks for typo expansions when exact matches do not fill the page; this backend
        // has no term dictionary yet, and refuses rather than answer otherwise.
        if let parsed, request.typoTolerance, parsed.mayMatchWithTypos, page.count < request.limit {
            throw .unsupported("typo tolerance", instead: "this search needs it (its exact matches do not fill the page): "
                                   + "search with typo tolerance off (--exact), or use an SQLite index")
        }
        // Typos are folded into the score as penalties, as searchlight_rank does; a hit reports them apart.
        let hits = page.map { $0.hit(ranked: parsed != nil) }
        var results = SearchResults(hits: hits, plan: plan, parsedQuery: parsed)
        if request.countsTotal {
            results.total = candidates.count
            if nearest, candidates.count >= search.needed, let center = search.center {
                results.total = try await search.rows(text: text, scorer: scorer, place: .circle(center: center, radius: Coordinate.maximumDistance)).count
            }
        }
        return results
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

    let index: PostgresIndex
    let request: SearchRequest
    /// Where an explained search records its statements.
    let log: StatementLog?

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
            var bindings = PostgresBindings()
            var counts: [String] = []
            for (_, query) in present {
                bindings.append(query)
                counts.append("count(*) FILTER (WHERE terms @@ $\(counts.count + 1)::tsquery)")
            }
            bindings.append("(" + present.map(\.1).joined(separator: ") | (") + ")")
            let sql = "SELECT \(counts.joined(separator: ", ")) FROM searchlight_items WHERE terms @@ $\(present.count + 1)::tsquery"
            if let row = try await query(sql, bindings, arguments: present.map(\.1) + ["(" + present.map(\.1).joined(separator: ") | (") + ")"]).first {
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

    /// Every row matching the words (if any) inside the region (if any), refined and scored.
    func rows(text: TextQuery?, scorer: OpaquePointer?, place: Region?) async throws(PostgresIndexError) -> [Candidate] {
        var bindings = PostgresBindings()
        var arguments: [String] = []
        var conditions: [String] = []
        func parameter<Value: PostgresNonThrowingEncodable & Sendable>(_ value: Value) -> String {
            bindings.append(value)
            arguments.append("\(value)")
            return "$\(bindings.count)"
        }
        var columns = "i.uri, i.entity, i.display_name, i.latitude, i.longitude, i.rank, i.value_lengths, i.name_positions, i.title_positions, i.text_positions, i.keyword_positions"
        var from = "searchlight_items i"
        if let text, let tsquery = text.tsquery {
            conditions.append("i.terms @@ \(parameter(tsquery))::tsquery")
            let exact = parameter(text.exactLexemes), prefixes = parameter(text.prefixes)
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
        if !request.entities.isEmpty { conditions.append("i.entity = ANY(\(parameter(request.entities))::text[])") }
        switch place {
        case .circle(let center, let radius)?:
            conditions.append(Self.circleCondition(center: center, radius: radius, parameter: parameter))
        case .box(let box)?:
            conditions.append(Self.boxCondition(box, parameter: parameter))
        case .both(let center, let radius, let box)?:
            conditions.append(Self.circleCondition(center: center, radius: radius, parameter: parameter))
            conditions.append(Self.boxCondition(box, parameter: parameter))
        case nil:
            break
        }
        let sql = "SELECT \(columns) FROM \(from)" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
        var candidates: [Candidate] = []
        for row in try await query(sql, bindings, arguments: arguments) {
            let (uri, entity, name, latitude, longitude, rank, lengths, namePositions, titlePositions, textPositions, keywordPositions, lexemes, positions, weights) =
                try PostgresIndex.decode(row, as: (String, String, String, Double?, Double?, Double, String, Int32, Int32, Int32, Int32,
                                                   [String]?, [String]?, [String]?).self)
            // Rows are told apart by URI here: there is no row id to carry.
            var candidate = Candidate(id: 0, uri: uri, entity: entity, displayName: name, latitude: latitude, longitude: longitude)
            if let text, let scorer {
                let terms = TextQuery.RowTerms(lexemes: lexemes ?? [], positions: positions ?? [], weights: weights ?? [])
                let vectorSizes = [Int(namePositions), Int(titlePositions), Int(textPositions), Int(keywordPositions)]
                guard let instances = text.instances(in: terms, columnSizes: vectorSizes) else { continue }
                candidate.score = try Self.score(instances, lengths: lengths, rank: rank, vectorSizes: vectorSizes, scorer: scorer)
            }
            if let refined = refine(candidate) { candidates.append(refined) }
        }
        return candidates
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
    func nearest(text: TextQuery?, scorer: OpaquePointer?) async throws(PostgresIndexError) -> [Candidate] {
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
    static func circleCondition(center: Coordinate, radius: Double, parameter: (Double) -> String) -> String {
        guard radius < Coordinate.maximumDistance else { return "i.place IS NOT NULL" }
        let widened = radius * (1 + 1e-6) + 1
        return "ST_DWithin(i.place, ST_SetSRID(ST_MakePoint(\(parameter(center.longitude)), \(parameter(center.latitude))), 4326)::geography, \(parameter(widened)), false)"
    }

    /// A box on the exact coordinates (a box across the antimeridian is two ranges of longitude).
    static func boxCondition(_ box: BoundingBox, parameter: (Double) -> String) -> String {
        let latitude = "i.latitude BETWEEN \(parameter(box.minLatitude)) AND \(parameter(box.maxLatitude))"
        let longitude = box.crossesAntimeridian
            ? "(i.longitude >= \(parameter(box.minLongitude)) OR i.longitude <= \(parameter(box.maxLongitude)))"
            : "i.longitude BETWEEN \(parameter(box.minLongitude)) AND \(parameter(box.maxLongitude))"
        return "(\(latitude) AND \(longitude))"
    }

    /// Runs one of the search's statements, recording it when the search is explained.
    func query(_ sql: String, _ bindings: PostgresBindings = PostgresBindings(), arguments: [String] = []) async throws(PostgresIndexError) -> [PostgresRow] {
        log?.record(.init(sql: sql, bindings: bindings, arguments: arguments))
        return try await index.rows(sql, bindings)
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
