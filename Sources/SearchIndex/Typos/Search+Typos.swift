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
        return plan.expanded(parsed, with: try plan.words.map { try expansions(of: $0, plan: plan, db: db) })
    }

    /// One word's expansions that match some item, at most the plan's per word.
    static func expansions(of word: TypoPlan.Word, plan: TypoPlan, db: Database) throws -> [TypoExpansion] {
        let found: [TypoExpansion]
        if !word.isPrefix, let matches = try TermDictionary.windowMatches(of: word.token, edits: word.edits, db: db) {
            // A seek per probe of the dictionary (hundreds for one edit, thousands for two), where the word's
            // window is read in chunks and measured at once. A prefix's window holds every longer term: walked.
            found = TypoExpansion.ranked(matches, word: Array(word.token.unicodeScalars), isPrefix: false, limit: plan.candidatesPerWord)
        } else {
            var expander = TypoExpander(db)
            found = try expander.expansions(of: word.token, isPrefix: word.isPrefix, maximumEdits: word.edits, limit: plan.candidatesPerWord)
        }
        var matching: [TypoExpansion] = []
        for expansion in found where matching.count < plan.perWord {
            if try matchesSomething(TypoPlan.term(expansion), db: db) { matching.append(expansion) }
        }
        return matching
    }

    /// Whether a word, prefix or phrase matches at least one item. FTS5 finds a word's first row at once, but
    /// merges every term of a prefix first: a prefix with a leader list that is not stale matches its listed
    /// rows (`San*`, found nowhere within 100 km and asked for a suggestion: 3.5 of its 4.4 ms at 940k items).
    static func matchesSomething(_ term: ParsedQuery.Term, db: Database) throws -> Bool {
        if term.isPrefix, let key = term.leaderKey, try TermLeaders.documents(ofKey: key, db: db) ?? 0 > 0 { return true }
        return try Int.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM items_fts WHERE items_fts MATCH ? LIMIT 1"), arguments: [term.expression]) != nil
    }

    /// For a search that found nothing: the words that match nothing, each replaced by the index's nearest
    /// term (fewest edits, then most items), or nil when no word has one near enough. A word found as a typo
    /// elsewhere is not corrected: `unexpanded`, the plan of a search that left its words unexpanded (its
    /// region holds no typo neighbour), has a word's expansions looked for here, as expanding would have.
    static func suggestion(for parsed: ParsedQuery, query: String, unexpanded: TypoPlan? = nil, db: Database) throws -> QuerySuggestion? {
        var corrections: [(term: ParsedQuery.Term, suggested: String)] = []
        for term in QuerySuggestion.correctableWords(of: parsed) {
            guard try !term.alternatives.contains(where: { try matchesSomething($0.term, db: db) }) else { continue }
            if let plan = unexpanded, let word = plan.words.first(where: { $0.token == term.tokens.first && $0.isPrefix == term.isPrefix }),
               try !expansions(of: word, plan: plan, db: db).isEmpty { continue }
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
