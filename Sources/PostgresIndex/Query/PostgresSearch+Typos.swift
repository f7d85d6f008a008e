#if PostgreSQL
import PostgresNIO
import SearchIndex

extension PostgresSearch {
    /// The query with every eligible word's typo expansions (``TypoPlan``), each checked to match some
    /// item, as the SQLite index expands it: the same walk over the same terms.
    func expanded(_ parsed: ParsedQuery) async throws(PostgresIndexError) -> ParsedQuery {
        guard let plan = TypoPlan(parsed) else { return parsed }
        var kept: [[TypoExpansion]] = []
        for word in plan.words {
            let candidates = try await expansions(of: word.token, isPrefix: word.isPrefix, edits: word.edits, limit: plan.candidatesPerWord)
            let matching = try await itemCounts(of: candidates, upTo: 1)
            kept.append(Array(zip(candidates, matching).filter { $0.1 > 0 }.map(\.0).prefix(plan.perWord)))
        }
        return plan.expanded(parsed, with: kept)
    }

    /// For a search that found nothing: the words that match nothing, each replaced by the index's
    /// nearest term (fewest edits, then most items), or nil when no word has one near enough.
    func suggestion(for parsed: ParsedQuery, query: String) async throws(PostgresIndexError) -> QuerySuggestion? {
        var corrections: [(term: ParsedQuery.Term, suggested: String)] = []
        for term in QuerySuggestion.correctableWords(of: parsed) {
            let alternatives = term.alternatives.compactMap { TextQuery.tsquery(of: .init(tokens: $0.term.tokens, isPrefix: $0.term.isPrefix, group: 0)) }
            guard !alternatives.isEmpty else { continue }
            let any = "(" + alternatives.joined(separator: ") | (") + ")"
            if try await self.query("SELECT 1 FROM searchlight_items WHERE terms @@ $1::tsquery LIMIT 1", parameters(any)).first != nil { continue }
            let word = term.tokens[0]
            let candidates = try await expansions(of: word, isPrefix: term.isPrefix, edits: QuerySuggestion.edits(for: word),
                                                  limit: QuerySuggestion.candidatesPerWord)
            guard let fewest = candidates.first?.edits else { continue }
            let nearest = candidates.filter { $0.edits == fewest }
            let counts = try await itemCounts(of: nearest, upTo: QuerySuggestion.countedItems)
            if let best = QuerySuggestion.best(of: zip(nearest, counts).map { (term: $0.term, items: $1) }) { corrections.append((term, best)) }
        }
        return QuerySuggestion(query: query, corrections: corrections)
    }

    /// Terms (or, for a prefix, term prefixes) within `edits` of `word`, fewest edits first, from the word's
    /// window of the term table, loaded in one statement: a word's measured term by term as SQLite measures its
    /// own window (``EditDistanceScan``), a prefix's walked as a trie (``TypoExpander``).
    func expansions(of word: String, isPrefix: Bool, edits: Int, limit: Int) async throws(PostgresIndexError) -> [TypoExpansion] {
        guard edits > 0, let window = TermWindow(word: word, isPrefix: isPrefix, edits: edits) else { return [] }
        var parameters = StatementParameters()
        var conditions = ["term >= \(parameters.add(String(window.first)))"]
        // Terms from the first letter up to the next one: a range of the index, in byte order.
        if let next = PackedTerms.successor(of: window.first) { conditions.append("term < \(parameters.add(String(next)))") }
        let longest = parameters.add(window.longest) + "::int4"
        conditions.append("char_length(term) >= \(parameters.add(window.shortest))::int4")
        if !window.cuts { conditions.append("char_length(term) <= \(longest)") }
        // In byte order (the column's collation is "C"): the scan measures a term from where it parts from the one
        // before, and a hashed DISTINCT would hand them over in any order.
        let terms = try await query("SELECT DISTINCT left(term, \(longest)) FROM searchlight_terms WHERE \(conditions.joined(separator: " AND ")) ORDER BY 1", parameters)
            .map { row throws(PostgresIndexError) in try PostgresIndex.decode(row, as: String.self) }
        guard isPrefix else {
            var scan = EditDistanceScan(word: word, maximumEdits: edits)
            for var term in terms { term.withUTF8 { scan.add($0) } }
            return TypoExpansion.ranked(scan.found, word: Array(word.unicodeScalars), isPrefix: false, limit: limit)
        }
        var expander = TypoExpander(terms: PackedTerms(terms))
        do { return try expander.expansions(of: word, isPrefix: isPrefix, maximumEdits: edits, limit: limit) } catch {
            throw .server(message: "the typo walk failed: \(error)", sqlState: nil)
        }
    }

    /// How many items each expansion matches, counted up to `cap` (1 tells whether it matches any).
    func itemCounts(of expansions: [TypoExpansion], upTo cap: Int) async throws(PostgresIndexError) -> [Int] {
        guard !expansions.isEmpty else { return [] }
        let queries = expansions.map { TextQuery.tsquery(of: .init(tokens: [$0.term], isPrefix: $0.isPrefix, group: 0)) ?? "" }
        var parameters = StatementParameters()
        let list = parameters.add(queries), limit = parameters.add(cap) + "::int8"
        let rows = try await query("""
            SELECT (SELECT count(*) FROM (SELECT 1 FROM searchlight_items WHERE terms @@ u.q::tsquery LIMIT \(limit)) s)
            FROM unnest(\(list)::text[]) WITH ORDINALITY AS u(q, o) ORDER BY u.o
            """, parameters)
        return try rows.map { row throws(PostgresIndexError) -> Int in
            let count: Int64 = try PostgresIndex.decode(row, as: Int64.self)
            return Int(count)
        }
    }

    /// Parameters of one text value.
    private func parameters(_ value: String) -> StatementParameters {
        var parameters = StatementParameters()
        _ = parameters.add(value)
        return parameters
    }
}
#endif
