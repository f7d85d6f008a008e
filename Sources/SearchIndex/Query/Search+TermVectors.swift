import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// Words checked against the places of a region one by one, from their term vectors (`items.term_vector`,
/// see term_vector.c), as PostgreSQL rechecks the rows its GiST index found: the plan for a small region and
/// broad words. FTS5 answers a prefix by merging the doclists of every term it covers before its first row
/// (`San*`, 1,782 terms, 7 ms), whatever the region holds; here the cost is the region's places.
extension Search {
    /// A query matched and scored against term vectors (`searchlight_vector_query`), freed with it.
    final class VectorQuery {
        let pointer: OpaquePointer

        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { searchlight_vector_query_free(pointer) }
    }

    /// The statement that scores one row with FTS5 when its vector cannot tell: the phrase plan, the MATCH
    /// expression and the row id, in that order.
    static let vectorFallbackSQL = """
        SELECT \(SearchIndex.rankFunction) FROM items_fts JOIN items i ON i.id = items_fts.rowid
        WHERE items_fts MATCH ? AND items_fts.rowid = ?
        """

    /// The query's phrases as term vectors match them, with the ranking's statistics: every phrase's row
    /// count (from its leader list, or counted by FTS5 as `searchlight_rank` would count it), the index's
    /// rows and average lengths. Nil when the index has no statistics (no FTS5 row at all).
    mutating func vectorQuery(_ parsed: ParsedQuery) throws -> VectorQuery? {
        guard let statistics = try TermLeaders.statistics(db), statistics.averages.count == Int(SEARCHLIGHT_RANK_COLUMNS) else { return nil }
        let listed = request.usesTermLeaders ? try TermLeaders.documents(ofKeys: parsed.leaderKeys, db: db) : [:]
        var counted: [String: Int] = [:]
        func documents(_ term: ParsedQuery.Term) throws -> Int {
            if let key = term.leaderKey, let count = listed[key] { return count }
            if let count = counted[term.expression] { return count }
            let sql = "SELECT COUNT(*) FROM items_fts WHERE items_fts MATCH ?"
            record(sql, [term.expression])
            let count = try Int.fetchOne(db.cachedStatement(sql: sql), arguments: [term.expression]) ?? 0
            counted[term.expression] = count
            return count
        }
        // The excluded phrases are never in a matching row: their counts weigh nothing.
        let phrases = try parsed.numberedPhrases.map { phrase in
            (term: phrase.term, group: Int32(phrase.group ?? -1), documents: phrase.group == nil ? 0 : try documents(phrase.term))
        }
        let byExpression = Dictionary(phrases.map { ($0.term.expression, $0.documents) }, uniquingKeysWith: { first, _ in first })
        // Every phrase's count in the plan: FTS5, scoring a row the vector cannot tell, then counts none.
        let plan = parsed.phrasePlan { byExpression[$0.expression] ?? 0 }
        // Each phrase as FTS5 tokenizes its quoted text (a typo expansion is a term, tokenized again).
        let tokens = phrases.map { SearchTokenizer.tokens(in: $0.term.text).map { Array($0.text.utf8) } }
        let sizes = tokens.map { Int32($0.count) }, frequencies = phrases.map { Double($0.documents) }
        let scorer = plan.withCString { searchlight_scorer_create(Int32(phrases.count), sizes, frequencies, statistics.rows, statistics.averages, $0) }
        guard let pointer = plan.withCString({ plan in
            parsed.expression.withCString { expression in
                Self.vectorFallbackSQL.withCString { sql in searchlight_vector_query_create(scorer, SearchIndex.columnWeights, sql, expression, plan) }
            }
        }) else { throw DatabaseError(resultCode: .SQLITE_NOMEM, message: "out of memory for the search's term-vector query") }
        let query = VectorQuery(pointer)
        for (phrase, words) in zip(phrases, tokens) {
            let status = SearchTokenizer.withPointers(to: words) { pointers, lengths in
                searchlight_vector_query_add_phrase(pointer, phrase.group, phrase.term.isPrefix ? 1 : 0, Int32(words.count), pointers, lengths)
            }
            guard status == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: status), message: "cannot build the search's term-vector query") }
        }
        return query
    }

    /// The places inside the boxes whose vectors match, scored; ordered by relevance for a page, only the
    /// page's best rows leave SQLite. The place filters drop a row before it is scored.
    mutating func vectorMatches(in boxes: [GeoMath.Box], query: VectorQuery) throws -> [Candidate] {
        let filter = itemFilter(probing: true, itemID: "g.id")
        let ranked = request.effectiveSort == .relevance && request.sortAttribute == nil && needed < Int.max
        // The query's parameter comes first, the place filters' last.
        let sql = """
            SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude,
                searchlight_vector_rank(i.id, i.term_vector, i.value_lengths, i.rank, ?) AS score
            FROM items_geo g JOIN items i ON i.id = g.id
            WHERE g.max_lat >= ? AND g.min_lat <= ? AND g.max_lon >= ? AND g.min_lon <= ?\(filter.sql)
                AND searchlight_placed(i.latitude, i.longitude, ?) AND score IS NOT NULL
            """ + (ranked ? " ORDER BY score, i.uri LIMIT \(needed)" : "")
        let statement = try db.cachedStatement(sql: sql)
        var candidates: [Candidate] = []
        for box in boxes {
            let arguments: StatementArguments = [DatabaseValue.null, box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude] + filter.arguments
            record(sql, ["(the query's term vectors)", box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude] + filter.arguments
                   + ["(the place filters)"])
            statement.setUncheckedArguments(arguments + [DatabaseValue.null])
            let last = sqlite3_bind_parameter_count(statement.sqliteStatement)
            candidates += try SQLiteCall.withVectorQuery(query.pointer, boundTo: statement, parameter: 1) {
                try SQLiteCall.withPlacement(of: request, boundTo: statement, parameter: last) {
                    try rankedCandidates(Row.fetchAll(statement)).compactMap(refine)
                }
            }
        }
        // Boxes split at the antimeridian or a pole share no row: each box's best, then the page's.
        if ranked && boxes.count > 1 { candidates = Array(candidates.sorted(by: SearchCandidate.ranksBefore).prefix(needed)) }
        return candidates
    }
}

extension Search {
    /// Whether some place of the request's region (a radius or a box) may hold a typo neighbour of one of
    /// the plan's words: when none does, no typo expansion can match there, and the exact page is the page
    /// without walking the term dictionary. True without a region, and when checking the region's places
    /// would cost more than the walks and the search again. At 940k items:
    /// - a place costs ≈ 0.1 µs to count and ≈ 0.7 to check, once for each word (every token is compared with
    ///   every word);
    /// - a walk takes 0.3–1.0 ms, one edit or two (a 2-edit walk probes its window in memory; it took 5–6 ms in
    ///   seeks, and `Henryville` within 50 km of a point in Germany read 4,599 vectors, 3.2 ms, to spare a
    ///   0.3 ms walk);
    /// - searching again with the expansions takes 0.3–4 ms (`Barza` near Munich, tier by tier: 3.7).
    mutating func regionMayHoldTypoNeighbours(of plan: TypoPlan) throws -> Bool {
        guard request.radius != nil || request.boundingBox != nil else { return true }
        // A prefix's expansions are prefixes of terms: the check would have to follow every term that starts
        // with one, which is the walk's work.
        guard !plan.words.contains(where: \.isPrefix) else { return true }
        let wordCount = Double(plan.words.count)
        // 3,125 places for one word, fewer for more (1,250 for very many).
        let places = Int((wordCount * 1_000 + 1_500) / (0.8 * wordCount))
        guard try countInRegion(cap: places + 1, radius: request.radius) <= places else { return true }
        guard let words = searchlight_typo_words_create() else { return true }
        defer { searchlight_typo_words_free(words) }
        for word in plan.words {
            let bytes = Array(word.token.utf8)
            let status = bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    searchlight_typo_words_add(words, $0.baseAddress, Int32($0.count), Int32(word.edits), word.isPrefix ? 1 : 0)
                }
            }
            guard status == SQLITE_OK else { return true }
        }
        // The region's places exactly (the R-tree's boxes hold more than a circle), asked only of a place with
        // a neighbour: SQLite tests the conditions in the order written.
        let sql = """
            SELECT EXISTS (SELECT 1 FROM items_geo g JOIN items i ON i.id = g.id
                WHERE g.max_lat >= ? AND g.min_lat <= ? AND g.max_lon >= ? AND g.min_lon <= ?
                    AND searchlight_typo_near(i.term_vector, ?) AND searchlight_placed(i.latitude, i.longitude, ?))
            """
        let statement = try db.cachedStatement(sql: sql)
        for box in regionBoxes(radius: request.radius) {
            record(sql, [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude, "(the words)", "(the place filters)"])
            statement.setUncheckedArguments([box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude, DatabaseValue.null, DatabaseValue.null])
            let found = try SQLiteCall.withTypoWords(words, boundTo: statement, parameter: 5) {
                try SQLiteCall.withPlacement(of: request, boundTo: statement, parameter: 6) { try Bool.fetchOne(statement) ?? true }
            }
            if found { return true }
        }
        return false
    }
}
