import CSearchTokenizer
import SearchIndex

/// A parsed query as PostgreSQL matches it and as Searchlight's ranking scores it: the phrases in FTS5's
/// numbering (each term, then its typo expansions, group by group, then the excluded terms), a `tsquery`
/// that the GIN index answers, and the instances of each phrase in a row, computed from the positions
/// the row's `tsvector` holds.
///
/// The `tsquery` only narrows the rows down; whether a row matches, and how well, is decided here from
/// its positions, by the same rules as FTS5: the answers are the SQLite index's.
struct TextQuery {
    /// One phrase: its tokens, and whether the last one is a prefix.
    struct Phrase: Hashable {
        var tokens: [String]
        var isPrefix: Bool
        /// The required group it belongs to; nil for an excluded phrase.
        var group: Int?
    }

    let phrases: [Phrase]
    let groupCount: Int
    /// The phrase plan the ranking reads (``ParsedQuery/phrasePlan``).
    let plan: String
    /// Tokens matched as typed, and prefixes: the lexemes a row's positions are read for.
    let exactLexemes: [String]
    let prefixes: [String]
    /// The `tsquery` text: every required group (its phrases as alternatives), and none of the excluded
    /// phrases; nil when some group can match nothing (all its phrases are empty). Made once per query:
    /// a nearest search runs its statement once per circle.
    let tsquery: String?

    init(_ parsed: ParsedQuery) {
        let phrases = parsed.numberedPhrases.map { Phrase(tokens: $0.term.tokens, isPrefix: $0.term.isPrefix, group: $0.group) }
        self.phrases = phrases
        groupCount = parsed.required.count
        plan = parsed.phrasePlan
        var exact = Set<String>(), prefixes = Set<String>()
        for phrase in phrases {
            for (index, token) in phrase.tokens.enumerated() {
                if phrase.isPrefix && index == phrase.tokens.count - 1 { prefixes.insert(token) } else { exact.insert(token) }
            }
        }
        exactLexemes = exact.sorted()
        self.prefixes = prefixes.sorted()
        tsquery = Self.tsquery(of: phrases, groupCount: groupCount)
    }

    private static func tsquery(of phrases: [Phrase], groupCount: Int) -> String? {
        var groups: [String] = []
        for group in 0..<groupCount {
            let alternatives = phrases.filter { $0.group == group }.compactMap(Self.tsquery(of:))
            guard !alternatives.isEmpty else { return nil }
            groups.append("(" + alternatives.joined(separator: " | ") + ")")
        }
        let excluded = phrases.filter { $0.group == nil }.compactMap(Self.tsquery(of:))
        var query = groups.joined(separator: " & ")
        if !excluded.isEmpty { query = "(" + query + ") & !(" + excluded.joined(separator: " | ") + ")" }
        return query
    }

    /// One phrase as a `tsquery`: its lexemes followed by one another, the last with `:*` for a prefix.
    static func tsquery(of phrase: Phrase) -> String? {
        guard !phrase.tokens.isEmpty else { return nil }
        let lexemes = phrase.tokens.enumerated().map { index, token in
            TermVector.quoted(token) + (phrase.isPrefix && index == phrase.tokens.count - 1 ? ":*" : "")
        }
        return lexemes.count == 1 ? lexemes[0] : "(" + lexemes.joined(separator: " <-> ") + ")"
    }

    /// A row's lexemes of interest with their tsvector positions and weights, as the search reads them.
    struct RowTerms {
        var lexemes: [String]
        var positions: [String]
        var weights: [String]
    }

    /// Each phrase's instances in a row, ordered by column, then offset, then phrase; nil when the row
    /// does not match the query (a required group without an instance, or an excluded phrase present).
    func instances(in row: RowTerms, columnSizes: [Int]) -> [searchlight_instance]? {
        let bases = TermVector.bases(columnSizes: columnSizes)
        // Column and offset of every position of every lexeme read.
        var occurrences: [String: Set<Int>] = [:]  // lexeme → column << 32 | offset
        for (index, lexeme) in row.lexemes.enumerated() where index < row.positions.count && index < row.weights.count {
            let weights = Array(row.weights[index].unicodeScalars)
            for (slot, text) in row.positions[index].split(separator: ",").enumerated() {
                guard let position = Int(text), slot < weights.count else { continue }
                let column: Int
                switch weights[slot] { case "A": column = 0; case "B": column = 1; case "C": column = 2; default: column = 3 }
                guard column < bases.count else { continue }
                let offset = position - 1 - bases[column]
                guard offset >= 0 else { continue }
                occurrences[lexeme, default: []].insert(column << 32 | offset)
            }
        }
        // Byte prefixes, as FTS5 and PostgreSQL's `:*` match them (`क` is a prefix of `किताब`; as Characters it is not).
        let prefixed = prefixes.map { prefix in (prefix, occurrences.filter { $0.key.utf8.starts(with: prefix.utf8) }.values.reduce(into: Set<Int>()) { $0.formUnion($1) }) }
        func places(_ token: String, prefix: Bool) -> Set<Int> {
            prefix ? prefixed.first { $0.0 == token }?.1 ?? [] : occurrences[token] ?? []
        }
        var found: [searchlight_instance] = []
        var matchedGroups = Set<Int>()
        for (number, phrase) in phrases.enumerated() where !phrase.tokens.isEmpty {
            let last = phrase.tokens.count - 1
            let starts = places(phrase.tokens[0], prefix: phrase.isPrefix && last == 0)
            for start in starts {
                var holds = true
                for step in 1..<max(1, phrase.tokens.count) where step <= last {
                    if !places(phrase.tokens[step], prefix: phrase.isPrefix && step == last).contains(start + step) { holds = false; break }
                }
                guard holds else { continue }
                guard let group = phrase.group else { return nil }  // an excluded phrase is present
                matchedGroups.insert(group)
                found.append(searchlight_instance(phrase: Int32(number), column: Int32(start >> 32), offset: Int32(truncatingIfNeeded: start & 0xFFFF_FFFF)))
            }
        }
        guard matchedGroups.count == groupCount else { return nil }
        found.sort { ($0.column, $0.offset, $0.phrase) < ($1.column, $1.offset, $1.phrase) }
        return found
    }
}
