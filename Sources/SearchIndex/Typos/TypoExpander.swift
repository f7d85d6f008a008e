import GRDB

/// A term within a few edits of a query word: matched in its place, ranked below exact matches.
public struct TypoExpansion: Sendable, Hashable {
    /// The term as the index holds it (normalized).
    public var term: String
    /// Edits from the word typed (insertions, deletions, substitutions, transpositions of neighbours).
    public var edits: Int
    /// Whether every term starting with it matches (the word typed was a prefix).
    public var isPrefix: Bool
}

extension TypoExpansion {
    /// The expansions of terms (or term prefixes) found within the edits of `word`, fewest edits first, then
    /// shortest, then in byte order; the word itself left out; at most `limit`.
    ///
    /// Only terms (and prefixes) that are one token as a query tokenizes them: FTS5 searches an expansion as it
    /// tokenizes it, so `macy'*` (a prefix of `macy's`) would be searched as `macy*`, and a term holding a space
    /// (U+037A normalizes to one) as a phrase of its words — neither what was found. Tokenized in order, only
    /// until `limit` are kept (a two-edit walk finds hundreds).
    package static func ranked(_ found: [[Unicode.Scalar]: Int], word: [Unicode.Scalar], isPrefix: Bool, limit: Int) -> [TypoExpansion] {
        found.filter { $0.key != word }
            .map { TypoExpansion(term: String(String.UnicodeScalarView($0.key)), edits: $0.value, isPrefix: isPrefix) }
            .sorted { a, b in
                (a.edits, a.term.utf8.count) != (b.edits, b.term.utf8.count)
                    ? (a.edits, a.term.utf8.count) < (b.edits, b.term.utf8.count)
                    : BinaryCollation.precedes(a.term, b.term)
            }
            .lazy.filter { SearchTokenizer.tokens(in: $0.term).map(\.text) == [$0.term] }
            .prefix(limit).map { $0 }
    }
}

/// Finds the index's terms within the allowed edits of a query word, by walking the term dictionary as
/// a trie with a Damerau–Levenshtein row per node (a Levenshtein automaton intersected with the sorted
/// terms, as Lucene's fuzzy query does): a node is left as soon as no continuation can stay within the
/// edits, and where no edit is left, only the characters that match are probed.
///
/// Rules (see README, Typo tolerance): words of 5 or more letters match with one edit, of 9 or more with
/// two; a transposition of neighbours is one edit; the first letter is never taken for a typo, which
/// keeps the walk to one branch of the trie and keeps `paris` from matching `baris`; words with a digit
/// match only as typed.
package struct TypoExpander<Terms: TermSource> {
    /// The terms walked.
    package var dictionary: Terms

    /// An expander over a set of terms.
    package init(terms: Terms) {
        dictionary = terms
    }

    /// Terms (or, for a prefix, term prefixes) within `maximumEdits` of `word`, fewest edits first, the
    /// word itself left out; at most `limit`.
    package mutating func expansions(of word: String, isPrefix: Bool, maximumEdits: Int, limit: Int) throws -> [TypoExpansion] {
        let query = Array(word.unicodeScalars)
        guard maximumEdits > 0, let first = query.first, limit > 0 else { return [] }
        var found: [[Unicode.Scalar]: Int] = [:]
        let root = Array(0...query.count)
        var walk = Walk(query: query, maximumEdits: maximumEdits, isPrefix: isPrefix)
        var prefix = [first]
        prefix.reserveCapacity(query.count + maximumEdits + 1)
        try walk.visit(prefix: &prefix, first: nil, row: walk.step(root, previous: nil, adding: first, after: nil), previous: root,
                       dictionary: &dictionary, found: &found)
        return TypoExpansion.ranked(found, word: query, isPrefix: isPrefix, limit: limit)
    }

    /// One walk: the query and its rules, and the Damerau–Levenshtein (optimal string alignment) rows.
    struct Walk {
        let query: [Unicode.Scalar]
        let maximumEdits: Int
        let isPrefix: Bool
        /// The UTF-8 bytes of the key being probed: one buffer for the walk.
        var keyBytes: [UInt8] = []

        init(query: [Unicode.Scalar], maximumEdits: Int, isPrefix: Bool) {
            self.query = query
            self.maximumEdits = maximumEdits
            self.isPrefix = isPrefix
        }

        /// The row of `prefix + scalar` from the row of `prefix` (`row`), its parent's (`previous`) and
        /// `prefix`'s last scalar (`after`): cell j is the edits between that string and query[0..<j].
        func step(_ row: [Int], previous: [Int]?, adding scalar: Unicode.Scalar, after: Unicode.Scalar?) -> [Int] {
            var next = [row[0] + 1]
            next.reserveCapacity(row.count)
            for j in 1..<row.count {
                var cell = min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (query[j - 1] == scalar ? 0 : 1))
                if j > 1, let previous, let after, query[j - 1] == after, query[j - 2] == scalar {
                    cell = min(cell, previous[j - 2] + 1)
                }
                next.append(cell)
            }
            return next
        }

        /// Visits a node; `covered` is the edits of the prefix expansion above it, if any (prefix mode).
        /// `prefix` is the walk's one buffer: a child is appended for its visit and removed after. `first` is
        /// the smallest term starting with `prefix`, when the seek that found the node read it: the node's
        /// own probes up to it are answered without seeking (a 2-edit walk makes a third fewer seeks).
        mutating func visit(prefix: inout [Unicode.Scalar], first: [UInt8]?, row: [Int], previous: [Int], covered: Int = .max,
                            dictionary: inout Terms, found: inout [[Unicode.Scalar]: Int]) throws {
            guard let best = row.min(), best <= maximumEdits else { return }
            let distance = row[query.count]
            var covered = covered
            if isPrefix && distance < covered && distance <= maximumEdits {
                // Every term below matches: the prefix stands for them. The walk goes on only where a longer
                // prefix may be fewer edits away (`abcd` is one from `abcde`, `abcdx` too, `abcde` none), so
                // that each term is counted with its fewest.
                if try first != nil || dictionary.probe(prefix, under: prefix.count, first: nil, keeping: false, bytes: &keyBytes).found != .outside {
                    record(prefix, distance, in: &found)
                }
                if best >= distance { return }
                covered = distance
            }
            let candidates: [(scalar: Unicode.Scalar, first: [UInt8])]
            if best < maximumEdits {
                // An edit is left: any character may follow.
                let children = try dictionary.children(of: prefix, first: first, bytes: &keyBytes)
                if !isPrefix && children.isTerm && distance <= maximumEdits { record(prefix, distance, in: &found) }
                candidates = children.children
            } else {
                // No edit left: only a character that matches the query where the row allows, or that
                // completes a transposition, keeps some cell within the edits.
                if !isPrefix, distance <= maximumEdits,
                   try dictionary.probe(prefix, under: prefix.count, first: first, keeping: false, bytes: &keyBytes).found == .exactly {
                    record(prefix, distance, in: &found)
                }
                var wanted: [Unicode.Scalar] = []
                for j in 0..<query.count where row[j] <= maximumEdits { wanted.append(query[j]) }
                if let last = prefix.last {
                    for j in 2...max(2, query.count) where j <= query.count && query[j - 1] == last && previous[j - 2] + 1 <= maximumEdits {
                        wanted.append(query[j - 2])
                    }
                }
                wanted.sort { $0.value < $1.value }
                var kept: [(scalar: Unicode.Scalar, first: [UInt8])] = []
                for (index, scalar) in wanted.enumerated() where index == 0 || wanted[index - 1] != scalar {
                    prefix.append(scalar)
                    defer { prefix.removeLast() }
                    // The term found starts with the longer prefix only as its smallest term.
                    if let term = try dictionary.probe(prefix, under: prefix.count, first: first, keeping: true, bytes: &keyBytes).term {
                        kept.append((scalar, term))
                    }
                }
                candidates = kept
            }
            let last = prefix.last
            for (scalar, smallest) in candidates {
                let next = step(row, previous: previous, adding: scalar, after: last)
                prefix.append(scalar)
                defer { prefix.removeLast() }
                try visit(prefix: &prefix, first: smallest, row: next, previous: row, covered: covered, dictionary: &dictionary, found: &found)
            }
        }

        private func record(_ term: [Unicode.Scalar], _ edits: Int, in found: inout [[Unicode.Scalar]: Int]) {
            found[term] = min(found[term] ?? edits, edits)
        }
    }
}

extension TypoExpander where Terms == TermDictionary {
    /// An expander over the SQLite index's term dictionary.
    init(_ db: Database) {
        self.init(terms: TermDictionary(db))
    }
}
