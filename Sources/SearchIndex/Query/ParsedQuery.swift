/// A plain-language query, parsed: what must match, what may match instead, what must not.
///
/// Every word reaches FTS5 inside double quotes, so no input can inject FTS5 syntax (column
/// filters, `NEAR`, `^`, bare operators): any string either parses to a safe expression or is
/// refused with a reason.
public struct ParsedQuery: Sendable, Hashable, CustomStringConvertible {
    /// One unit that must match: a word, a prefix or a phrase, each kept as the user wrote it.
    public struct Term: Sendable, Hashable {
        /// The text as typed (FTS5 tokenizes it with the same tokenizer as documents).
        public var text: String
        /// The normalized tokens it produced, for selectivity estimates.
        public var tokens: [String]
        /// Whether the last token is a prefix (`word*`).
        public var isPrefix: Bool
        /// Whether it was a quoted phrase.
        public var isPhrase: Bool
        /// Terms within a few edits that match in its place, ranked below it (typo tolerance); empty
        /// for phrases, several-token words, short words and searches with ``SearchRequest/typoTolerance`` off.
        public var expansions: [TypoExpansion] = []

        /// Creates a term.
        public init(text: String, tokens: [String], isPrefix: Bool, isPhrase: Bool) {
            self.text = text
            self.tokens = tokens
            self.isPrefix = isPrefix
            self.isPhrase = isPhrase
        }

        /// The FTS5 spelling: a quoted string, `*` after it for prefixes. Quotes are doubled scalar by
        /// scalar: a `"` followed by a combining mark is one Swift Character that String replacement misses.
        var expression: String {
            var quoted = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                quoted.append(scalar)
                if scalar == "\"" { quoted.append(scalar) }
            }
            return "\"" + String(quoted) + "\"" + (isPrefix ? " *" : "")
        }

        /// The term and its typo expansions, each a term of its own, in the order FTS5 numbers their
        /// phrases, with the edits of each: what the MATCH expression, the ranking's phrase plan and every
        /// other index's matching read, so that they cannot disagree.
        package var alternatives: [(term: Term, edits: Int)] {
            [(self, 0)] + expansions.map { expansion in
                (Term(text: expansion.term, tokens: [expansion.term], isPrefix: expansion.isPrefix, isPhrase: false), expansion.edits)
            }
        }

        /// The key of the term's leader list (``TermLeaders/key(token:isPrefix:)``): a word's or prefix's, and a
        /// quoted single word's (the same phrase to FTS5); a phrase's (``TermLeaders/key(phrase:)``) for
        /// several tokens, nil when its last is a prefix.
        var leaderKey: String? {
            if tokens.count == 1 { return TermLeaders.key(token: tokens[0], isPrefix: isPrefix) }
            return isPrefix ? nil : TermLeaders.key(phrase: tokens)
        }

        /// The term and its expansions as FTS5 phrases, in order, with the edits of each (quoted as the
        /// term itself is, scalar by scalar).
        var phrases: [(expression: String, edits: Int)] { alternatives.map { ($0.term.expression, $0.edits) } }
    }

    /// Groups that must all match; within a group any term may (`a OR b`).
    public var required: [[Term]]
    /// Terms that must not match (`-word`).
    public var excluded: [Term]

    /// The FTS5 MATCH expression: each term with its typo expansions as alternatives.
    public var expression: String {
        let groups = required.map { group in
            let phrases = group.flatMap(\.phrases).map(\.expression)
            return phrases.count == 1 ? phrases[0] : "(" + phrases.joined(separator: " OR ") + ")"
        }
        var expression = groups.joined(separator: " AND ")
        if !excluded.isEmpty {
            expression = "(\(expression)) NOT (" + excluded.map(\.expression).joined(separator: " OR ") + ")"
        }
        return expression
    }

    /// Each FTS5 phrase of ``expression``, in FTS5's numbering, as `group:edits` (`-` for excluded ones):
    /// the ranking function counts a row's typos from it, the fewest edits of the phrases it matched in each
    /// group, so that exact matches always come first.
    package var phrasePlan: String { phrasePlan { _ in nil } }

    /// The phrase plan with the row count of each phrase that `documents` knows (`0:1@408720`): the ranking
    /// function then does not count that phrase's rows, a walk of its whole doclist.
    func phrasePlan(documents: (Term) -> Int?) -> String {
        numberedPhrases.map { phrase in
            (phrase.group.map { "\($0):\(phrase.edits)" } ?? "-") + (documents(phrase.term).map { "@\($0)" } ?? "")
        }.joined(separator: " ")
    }

    /// Every FTS5 phrase of ``expression`` in FTS5's numbering: each required group's terms with their typo
    /// expansions, then the excluded terms (group nil). What the phrase plan, the term-vector plan and every
    /// other index's matching number phrases by, so that they cannot disagree.
    package var numberedPhrases: [(term: Term, group: Int?, edits: Int)] {
        var phrases: [(term: Term, group: Int?, edits: Int)] = []
        for (index, group) in required.enumerated() {
            for alternative in group.flatMap(\.alternatives) { phrases.append((alternative.term, index, alternative.edits)) }
        }
        return phrases + excluded.map { ($0, nil, 0) }
    }

    /// The leader-list key of every word, prefix and phrase of the query, its typo expansions and exclusions
    /// included.
    var leaderKeys: Set<String> { Set((required.joined().flatMap { $0.alternatives.map(\.term) } + excluded).compactMap(\.leaderKey)) }

    /// How many FTS5 phrases ``expression`` holds, expansions and excluded terms included.
    var phraseCount: Int { required.joined().reduce(excluded.count) { $0 + 1 + $1.expansions.count } }

    /// Whether some term or typo expansion is a prefix (FTS5 merges a prefix's doclist from every term it covers).
    var hasPrefix: Bool { required.joined().contains { term in term.isPrefix || term.expansions.contains(where: \.isPrefix) } }

    /// The leader list that may answer a query of one word or one prefix and nothing else (no
    /// alternatives, expansions or exclusions): its key (``TermLeaders``).
    var leaderKey: String? {
        guard required.count == 1, required[0].count == 1, excluded.isEmpty else { return nil }
        let term = required[0][0]
        return term.expansions.isEmpty ? term.leaderKey : nil
    }

    /// The one group of a query that requires one group of alternatives (`europa OR rome`) or one word with
    /// typo expansions: a row's typos are then those of its closest alternative, and its tiers can be searched
    /// one at a time, frequent alternatives from their leader lists (``Search/typoTierPage(of:offset:limit:)``).
    /// One word alone has its own list (``leaderKey``).
    var typoTieredGroup: [Term]? {
        guard required.count == 1, required[0].count > 1 || required[0].contains(where: { !$0.expansions.isEmpty }) else { return nil }
        return required[0]
    }

    /// Whether some term has typo expansions.
    public var hasExpansions: Bool { required.contains { group in group.contains { !$0.expansions.isEmpty } } }

    /// A readable rendering of the parse, for `explain`.
    public var description: String {
        let groups = required.map { group in group.map(Self.describe).joined(separator: " OR ") }
        return (groups.map { "[\($0)]" } + excluded.map { "NOT " + Self.describe($0) }).joined(separator: " AND ")
    }

    private static func describe(_ term: Term) -> String {
        let typed = (term.isPhrase ? "phrase" : term.isPrefix ? "prefix" : "word") + " " + term.tokens.joined(separator: " ") + (term.isPrefix ? "*" : "")
        guard !term.expansions.isEmpty else { return typed }
        let expansions = term.expansions.map { "\($0.term)\($0.isPrefix ? "*" : "") (\($0.edits) edit\($0.edits == 1 ? "" : "s"))" }
        return typed + " ~ " + expansions.joined(separator: ", ")
    }
}

/// Turns what people type into a ``ParsedQuery``.
///
/// Syntax: words (all must match), `"quoted phrases"`, `prefix*`, `OR` between two terms, `-excluded`.
/// Case, width and diacritics never matter; CJK and Thai are segmented into words. An unbalanced quote
/// runs to the end; `OR` with nothing on one side is an ordinary word.
public enum QueryParser {
    /// The longest query accepted, in characters.
    public static let maximumLength = 10_000
    /// The most terms a query may have.
    public static let maximumTerms = 64

    private enum Lexeme {
        case term(ParsedQuery.Term, excluded: Bool)
        case or
    }

    /// Parses a query, or explains why it cannot be searched.
    ///
    /// With `lastWordIsPrefix` (search as you type), the last term is a prefix unless the query ends
    /// with a space or a closing quote (the word is finished) or the term excludes: `san fr` finds San
    /// Francisco, and a final `OR` is the start of a word.
    public static func parse(_ query: String, lastWordIsPrefix: Bool = false) throws(SearchIndexError) -> ParsedQuery {
        // Counted in code points, not grapheme clusters: one "character" can carry 100,000 combining marks.
        let length = query.unicodeScalars.count
        guard length <= maximumLength else {
            throw .invalidQuery(reason: "the query is \(length) characters long; at most \(maximumLength) are searched")
        }
        // Control characters (NUL included) are never part of a word.
        let cleaned = String(String.UnicodeScalarView(query.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        // Terms whose text holds no word (punctuation, a lone *) match nothing and are dropped.
        var lexemes = lex(cleaned).filter { lexeme in
            if case .term(let term, _) = lexeme { return !term.tokens.isEmpty }
            return true
        }
        // As you type, the last word is unfinished: a prefix, `OR` included (the start of `Orlando`), but
        // not after a space or a closing quote, which finish it.
        if lastWordIsPrefix, let end = cleaned.unicodeScalars.last, !end.properties.isWhitespace, !quotationMarks.contains(end) {
            switch lexemes.last {
            case .term(var term, excluded: false)?:
                term.isPrefix = true
                lexemes[lexemes.count - 1] = .term(term, excluded: false)
            case .or?:
                lexemes[lexemes.count - 1] = .term(term("OR", prefix: true, phrase: false), excluded: false)
            default:
                break
            }
        }
        func isPositiveTerm(_ index: Int) -> Bool {
            guard lexemes.indices.contains(index), case .term(_, excluded: false) = lexemes[index] else { return false }
            return true
        }
        var required: [[ParsedQuery.Term]] = []
        var excluded: [ParsedQuery.Term] = []
        var joinNext = false
        for (index, lexeme) in lexemes.enumerated() {
            switch lexeme {
            case .or where isPositiveTerm(index - 1) && isPositiveTerm(index + 1):
                joinNext = true
            case .or:
                throw .invalidQuery(reason: "OR needs a word on each side (tokyo OR kyoto); to search for the word, write it in lower case or quotes: \"or\"")
            case .term(let term, excluded: true):
                excluded.append(term)
            case .term(let term, excluded: false):
                if joinNext, !required.isEmpty { required[required.count - 1].append(term) } else { required.append([term]) }
                joinNext = false
            }
        }
        guard !required.isEmpty else {
            throw .invalidQuery(reason: excluded.isEmpty
                ? "the query has no words to search for"
                : "add at least one word to look for; -word only excludes")
        }
        // Repeats add nothing but cost: `x* OR x*` is `x*`, `tokyo tokyo` is `tokyo`. Every repeat of a
        // prefix would make FTS5 expand it again in every statement of the search.
        func key(_ term: ParsedQuery.Term) -> String {
            term.tokens.joined(separator: " ") + (term.isPrefix ? "*" : "") + (term.isPhrase && term.tokens.count > 1 ? "\"" : "")
        }
        func unique(_ terms: [ParsedQuery.Term]) -> [ParsedQuery.Term] {
            var seen: Set<String> = []
            return terms.filter { seen.insert(key($0)).inserted }
        }
        var seenGroups: Set<[String]> = []
        required = required.map(unique).filter { seenGroups.insert($0.map(key).sorted()).inserted }
        excluded = unique(excluded)
        let count = required.reduce(0) { $0 + $1.count } + excluded.count
        guard count <= maximumTerms else {
            throw .invalidQuery(reason: "the query has \(count) terms; at most \(maximumTerms) are searched")
        }
        return ParsedQuery(required: required, excluded: excluded)
    }

    private static func term(_ text: String, prefix: Bool, phrase: Bool) -> ParsedQuery.Term {
        ParsedQuery.Term(text: text, tokens: SearchTokenizer.tokens(in: text).map(\.text), isPrefix: prefix, isPhrase: phrase)
    }

    /// Quotation marks people type for `"`: curly, low-9, guillemets, fullwidth.
    static let quotationMarks: Set<Unicode.Scalar> = ["\"", "\u{201C}", "\u{201D}", "\u{201E}", "\u{201F}", "\u{00AB}", "\u{00BB}", "\u{FF02}"]

    /// Splits a query into terms and ORs, scalar by scalar (a quote followed by a combining mark is one
    /// Swift Character, yet still a quote).
    private static func lex(_ text: String) -> [Lexeme] {
        let scalars = Array(text.unicodeScalars)
        var lexemes: [Lexeme] = []
        var index = 0
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar == "(" || scalar == ")" }
        func isQuote(_ scalar: Unicode.Scalar) -> Bool { quotationMarks.contains(scalar) }
        func string(_ range: Range<Int>) -> String { String(String.UnicodeScalarView(scalars[range])) }
        while index < scalars.count {
            if isSpace(scalars[index]) { index += 1; continue }
            var excluded = false
            var start = index
            if scalars[index] == "-", index + 1 < scalars.count, !isSpace(scalars[index + 1]) {
                excluded = true
                start = index + 1
            }
            if isQuote(scalars[start]) {
                let open = start + 1
                let close = scalars[open...].firstIndex(where: isQuote) ?? scalars.count // unbalanced: to the end
                var inner = string(open..<close)
                index = min(close + 1, scalars.count)
                // "san fran*" and "san fran"*: a phrase whose last word is a prefix.
                var prefix = false
                while inner.unicodeScalars.last == "*" { inner.unicodeScalars.removeLast(); prefix = true }
                while index < scalars.count, scalars[index] == "*" { index += 1; prefix = true }
                inner = String(String.UnicodeScalarView(inner.unicodeScalars.map { $0 == "*" ? " " : $0 }))
                lexemes.append(.term(term(inner, prefix: prefix, phrase: true), excluded: excluded))
                continue
            }
            var end = start
            while end < scalars.count, !isSpace(scalars[end]), !isQuote(scalars[end]) { end += 1 }
            var word = string(start..<end)
            index = end
            if word == "OR" && !excluded { lexemes.append(.or); continue }
            var prefix = false
            while word.unicodeScalars.last == "*" { word.unicodeScalars.removeLast(); prefix = true }
            // A star inside a word is not an operator: treat it as a separator.
            word = String(String.UnicodeScalarView(word.unicodeScalars.map { $0 == "*" ? " " : $0 }))
            if !word.isEmpty { lexemes.append(.term(term(word, prefix: prefix, phrase: false), excluded: excluded)) }
        }
        return lexemes
    }
}
