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
    /// The most phrases a query may have with its expansions: the ranking function tracks which phrases
    /// a row matched in 64-bit masks.
    static let maximumPhrases = 64
    /// The most expansions one word gets, fewest edits first (Lucene's fuzzy query keeps 50).
    static let maximumExpansionsPerWord = 16

    /// The edits a term may have: single words only (not phrases), by ``TypoExpander/allowedEdits(for:)``.
    static func allowedEdits(_ term: ParsedQuery.Term) -> Int {
        guard !term.isPhrase, term.tokens.count == 1 else { return 0 }
        return TypoExpander.allowedEdits(for: term.tokens[0])
    }

    /// The query with every eligible word's typo expansions: required single words (not phrases) of 5
    /// letters or more, without digits; each expansion checked against FTS5, so a term of a deleted item never stands in.
    static func expanded(_ parsed: ParsedQuery, db: Database) throws -> ParsedQuery {
        let eligible = allowedEdits
        let words = parsed.required.joined().filter { eligible($0) > 0 }.count
        guard words > 0 else { return parsed }
        let terms = parsed.required.joined().count + parsed.excluded.count
        let perWord = min(maximumExpansionsPerWord, (maximumPhrases - terms) / words)
        guard perWord > 0 else { return parsed }
        var expander = TypoExpander(db)
        var expanded = parsed
        for group in expanded.required.indices {
            for index in expanded.required[group].indices {
                let term = expanded.required[group][index]
                let edits = eligible(term)
                guard edits > 0 else { continue }
                var kept: [TypoExpansion] = []
                for expansion in try expander.expansions(of: term.tokens[0], isPrefix: term.isPrefix, maximumEdits: edits, limit: perWord * 2)
                where kept.count < perWord {
                    if try matchesSomething(ParsedQuery.Term(text: expansion.term, tokens: [expansion.term], isPrefix: expansion.isPrefix, isPhrase: false).expression, db: db) {
                        kept.append(expansion)
                    }
                }
                expanded.required[group][index].expansions = kept
            }
        }
        return expanded
    }

    /// Whether an FTS5 expression matches at least one item.
    static func matchesSomething(_ expression: String, db: Database) throws -> Bool {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM items_fts WHERE items_fts MATCH ? LIMIT 1"), arguments: [expression]) != nil
    }

    /// For a search that found nothing: the words that match nothing, each replaced by the index's nearest
    /// term (fewest edits, then most items), or nil when no word has one near enough.
    static func suggestion(for parsed: ParsedQuery, query: String, db: Database) throws -> QuerySuggestion? {
        var corrections: [QuerySuggestion.Correction] = []
        var corrected = query
        // Where the next word is looked for: after the last one replaced, never inside it.
        var searchFrom = corrected.startIndex
        for term in parsed.required.joined() where !term.isPhrase && term.tokens.count == 1 {
            let alternatives = term.phrases.map(\.expression).joined(separator: " OR ")
            guard try !matchesSomething(alternatives, db: db) else { continue }
            let word = term.tokens[0]
            // One edit more than matching allows, at least two: a suggestion may be further than a match.
            let edits = min(3, max(2, TypoExpander.allowedEdits(for: word) + 1))
            var expander = TypoExpander(db)  // each word its own probe budget
            expander.dictionary.seekLimit = 20_000
            let candidates = try expander.expansions(of: word, isPrefix: term.isPrefix, maximumEdits: edits, limit: 50)
            guard let fewest = candidates.first?.edits else { continue }
            var best: (term: String, items: Int)?
            for candidate in candidates where candidate.edits == fewest {
                let expression = ParsedQuery.Term(text: candidate.term, tokens: [candidate.term], isPrefix: candidate.isPrefix, isPhrase: false).expression
                let items = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM (SELECT 1 FROM items_fts WHERE items_fts MATCH ? LIMIT 10000)"),
                                             arguments: [expression]) ?? 0
                if items > 0, items > best?.items ?? 0 { best = (candidate.term, items) }
            }
            guard let best else { continue }
            corrections.append(QuerySuggestion.Correction(typed: term.text, suggested: best.term))
            // A typed star stays where it was.
            if let range = corrected.range(of: term.text, range: searchFrom..<corrected.endIndex) {
                let offset = corrected.distance(from: corrected.startIndex, to: range.lowerBound) + best.term.count
                corrected.replaceSubrange(range, with: best.term)
                searchFrom = corrected.index(corrected.startIndex, offsetBy: offset)
            }
        }
        return corrections.isEmpty ? nil : QuerySuggestion(corrections: corrections, query: corrected)
    }
}

extension ParsedQuery {
    /// Whether some word of the query may match with typos: a search then looks for typo expansions when
    /// its exact matches do not fill the page.
    package var mayMatchWithTypos: Bool { required.joined().contains { Search.allowedEdits($0) > 0 } }
}
