import CSearchTokenizer

/// The typo expansions a query may get, worked out once for every backend: which of its words, with how
/// many edits, and how many expansions each may keep. Backends find the expansions (``TypoExpander``
/// over their terms), keep those that match some item, and hand them back (``expanded(_:with:)``).
package struct TypoPlan: Sendable {
    /// A word that may match with typos, and where it is in the query.
    package struct Word: Sendable {
        /// The required group and the term's place in it.
        package var group: Int, index: Int
        /// The word's one token, as the index holds terms.
        package var token: String
        /// Whether the word is typed as a prefix.
        package var isPrefix: Bool
        /// The edits it may be away from a term.
        package var edits: Int
    }

    /// The most phrases a query may have with its expansions: the ranking function tracks which phrases
    /// a row matched in 64-bit masks.
    package static let maximumPhrases = 64
    /// The shortest term, in scalars, a term dictionary keeps: a 5-letter word with one edit matches
    /// 4-letter terms at the shortest.
    package static let minimumTermLength = Int(SEARCHLIGHT_TYPO_MINIMUM_TERM)
    /// The most expansions one word gets, fewest edits first (Lucene's fuzzy query keeps 50).
    package static let maximumExpansionsPerWord = 16

    /// The words that may match with typos, in query order.
    package let words: [Word]
    /// How many expansions each word may keep.
    package let perWord: Int
    /// How many candidates to look for per word: twice what is kept, since some may match no item.
    package var candidatesPerWord: Int { perWord * 2 }

    /// The plan for a query; nil when no word of it may match with typos, or no expansion fits.
    package init?(_ parsed: ParsedQuery) {
        var words: [Word] = []
        for (group, terms) in parsed.required.enumerated() {
            for (index, term) in terms.enumerated() {
                let edits = Self.allowedEdits(term)
                if edits > 0 { words.append(Word(group: group, index: index, token: term.tokens[0], isPrefix: term.isPrefix, edits: edits)) }
            }
        }
        guard !words.isEmpty else { return nil }
        let terms = parsed.required.joined().count + parsed.excluded.count
        let perWord = min(Self.maximumExpansionsPerWord, (Self.maximumPhrases - terms) / words.count)
        guard perWord > 0 else { return nil }
        self.words = words
        self.perWord = perWord
    }

    /// The query with each word's expansions (`kept[i]` for `words[i]`).
    package func expanded(_ parsed: ParsedQuery, with kept: [[TypoExpansion]]) -> ParsedQuery {
        var expanded = parsed
        for (word, expansions) in zip(words, kept) { expanded.required[word.group][word.index].expansions = Array(expansions.prefix(perWord)) }
        return expanded
    }

    /// An expansion as a query term of its own (what is checked to match some item).
    package static func term(_ expansion: TypoExpansion) -> ParsedQuery.Term {
        ParsedQuery.Term(text: expansion.term, tokens: [expansion.term], isPrefix: expansion.isPrefix, isPhrase: false)
    }

    /// The fewest letters a word needs to match with two edits.
    package static let twoEditLength = 9

    /// The edits a word may be away from a term: by its length, and none for a word with a digit (`A380`
    /// and `A320`, `town999` and `town998` are different things, not typos of each other).
    package static func allowedEdits(for word: String) -> Int {
        let scalars = word.unicodeScalars
        guard !scalars.contains(where: { $0.properties.numericType != nil }) else { return 0 }
        let length = scalars.count
        return length >= twoEditLength ? 2 : length >= 5 ? 1 : 0
    }

    /// The edits a term may have: single words only (not phrases), by ``allowedEdits(for:)``.
    package static func allowedEdits(_ term: ParsedQuery.Term) -> Int {
        guard !term.isPhrase, term.tokens.count == 1 else { return 0 }
        return allowedEdits(for: term.tokens[0])
    }
}

extension QuerySuggestion {
    /// The words a suggestion may correct: single words, not phrases, in query order.
    package static func correctableWords(of parsed: ParsedQuery) -> [ParsedQuery.Term] {
        parsed.required.joined().filter { !$0.isPhrase && $0.tokens.count == 1 }
    }

    /// The edits a suggestion may be away from a word: one more than matching allows, at least two, at
    /// most three (a suggestion may be further than a match).
    package static func edits(for word: String) -> Int { min(3, max(2, TypoPlan.allowedEdits(for: word) + 1)) }

    /// Candidates looked for per word, probes a walk may make, and items counted per candidate at most.
    package static let candidatesPerWord = 50
    package static let probesPerWord = 20_000
    package static let countedItems = 10_000

    /// The candidate to propose from those with the fewest edits and their item counts (in walk order):
    /// the one with the most items, the first of equals; nil when none has any.
    package static func best(of counted: [(term: String, items: Int)]) -> String? {
        var best: (term: String, items: Int)?
        for candidate in counted where candidate.items > 0 && candidate.items > best?.items ?? 0 { best = candidate }
        return best?.term
    }

    /// The suggestion that replaces each corrected word of `query` (in order, a typed star left where it
    /// was); nil when there is no correction.
    package init?(query: String, corrections: [(term: ParsedQuery.Term, suggested: String)]) {
        guard !corrections.isEmpty else { return nil }
        var corrected = query
        // Where the next word is looked for: after the last one replaced, never inside it.
        var searchFrom = corrected.startIndex
        for (term, suggested) in corrections {
            if let range = corrected.range(of: term.text, range: searchFrom..<corrected.endIndex) {
                let offset = corrected.distance(from: corrected.startIndex, to: range.lowerBound) + suggested.count
                corrected.replaceSubrange(range, with: suggested)
                searchFrom = corrected.index(corrected.startIndex, offsetBy: offset)
            }
        }
        self.init(corrections: corrections.map { Correction(typed: $0.term.text, suggested: $0.suggested) }, query: corrected)
    }
}
