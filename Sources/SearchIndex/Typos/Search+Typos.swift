import GRDB

/// A query word that matched nothing, and the index's nearest term.
public struct QuerySuggestion: Sendable, Hashable {
    /// One word as typed and the term proposed instead.
    public struct Correction: Sendable, Hashable {
        /// The word as typed.
        public var typed: String
        /// The index's nearest term.
        public var suggested: String
    }

    /// The words that matched nothing, each with the term proposed instead.
    public var corrections: [Correction]
    /// The query with those words replaced.
    public var query: String
}

extension Search {
    /// The query with every eligible word's typo expansions (``TypoPlan``): required single words (not
    /// phrases) of 5 letters or more, without digits; each expansion checked against FTS5, so a term of a
    /// deleted item never stands in.
    static func expanded(_ parsed: ParsedQuery, db: Database) throws -> ParsedQuery {
        guard let plan = TypoPlan(parsed) else { return parsed }
        var expander = TypoExpander(db)
        var kept: [[TypoExpansion]] = []
        for word in plan.words {
            var matching: [TypoExpansion] = []
            for expansion in try expander.expansions(of: word.token, isPrefix: word.isPrefix, maximumEdits: word.edits, limit: plan.candidatesPerWord)
            where matching.count < plan.perWord {
                if try matchesSomething(TypoPlan.term(expansion).expression, db: db) { matching.append(expansion) }
            }
            kept.append(matching)
        }
        return plan.expanded(parsed, with: kept)
    }

    /// Whether an FTS5 expression matches at least one item.
    static func matchesSomething(_ expression: String, db: Database) throws -> Bool {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM items_fts WHERE items_fts MATCH ? LIMIT 1"), arguments: [expression]) != nil
    }

    /// For a search that found nothing: the words that match nothing, each replaced by the index's nearest
    /// term (fewest edits, then most items), or nil when no word has one near enough.
    static func suggestion(for parsed: ParsedQuery, query: String, db: Database) throws -> QuerySuggestion? {
        var corrections: [(term: ParsedQuery.Term, suggested: String)] = []
        for term in QuerySuggestion.correctableWords(of: parsed) {
            // A word or prefix with a leader list matches its listed rows: asking FTS5 would merge every term of
            // a prefix first (`San*`, found nowhere within 100 km: 3.5 of its 4.4 ms at 940k items).
            if let key = term.leaderKey, try TermLeaders.documents(ofKeys: [key], db: db)[key] ?? 0 > 0 { continue }
            let alternatives = term.phrases.map(\.expression).joined(separator: " OR ")
            guard try !matchesSomething(alternatives, db: db) else { continue }
            let word = term.tokens[0]
            var expander = TypoExpander(db)  // each word its own probe budget
            expander.dictionary.seekLimit = QuerySuggestion.probesPerWord
            let candidates = try expander.expansions(of: word, isPrefix: term.isPrefix, maximumEdits: QuerySuggestion.edits(for: word),
                                                     limit: QuerySuggestion.candidatesPerWord)
            guard let fewest = candidates.first?.edits else { continue }
            var counted: [(term: String, items: Int)] = []
            for candidate in candidates where candidate.edits == fewest {
                let items = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM (SELECT 1 FROM items_fts WHERE items_fts MATCH ? LIMIT ?)"),
                                             arguments: [TypoPlan.term(candidate).expression, QuerySuggestion.countedItems]) ?? 0
                counted.append((candidate.term, items))
            }
            if let best = QuerySuggestion.best(of: counted) { corrections.append((term, best)) }
        }
        return QuerySuggestion(query: query, corrections: corrections)
    }
}

extension ParsedQuery {
    /// Whether some word of the query may match with typos: a search then looks for typo expansions when
    /// its exact matches do not fill the page.
    package var mayMatchWithTypos: Bool { required.joined().contains { TypoPlan.allowedEdits($0) > 0 } }
}
