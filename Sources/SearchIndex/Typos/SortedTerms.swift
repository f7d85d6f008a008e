/// Terms held in memory in byte order: the window of a backend's term table that a walk can reach
/// (terms with the query word's first letter and a length within the edits), probed by binary search.
package struct SortedTerms: TermSource {
    /// The terms' UTF-8 bytes, sorted.
    private let terms: [[UInt8]]

    /// The terms, in any order; duplicates are kept once.
    package init(_ terms: [String]) {
        var sorted = terms.map { Array($0.utf8) }
        sorted.sort { $0.lexicographicallyPrecedes($1) }
        var unique: [[UInt8]] = []
        unique.reserveCapacity(sorted.count)
        for term in sorted where unique.last != term { unique.append(term) }
        self.terms = unique
    }

    /// The number of terms held.
    package var count: Int { terms.count }

    /// The first term at or after `key`, by binary search.
    package mutating func withTerm<Result>(atOrAfter key: [UInt8], _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        var (low, high) = (0, terms.count)
        while low < high {
            let middle = (low + high) / 2
            if terms[middle].lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
        }
        guard low < terms.count else { return body(nil) }
        return terms[low].withUnsafeBufferPointer { body($0) }
    }
}

/// The terms a walk for one word can reach, and nothing else: those that start with the word's first
/// letter (never taken for a typo) and whose length is within the edits. For a prefix, every longer term
/// stands in cut to the longest prefix that can be within the edits. A walk over this window finds
/// exactly what it finds over all terms, so a backend loads only the window.
package struct TermWindow: Sendable {
    /// The letter every term of the window starts with.
    package let first: Unicode.Scalar
    /// The fewest and most scalars a term (or, for a prefix, a term's cut) may have.
    package let shortest: Int, longest: Int
    /// Whether longer terms are cut to ``longest`` (a prefix) rather than left out.
    package let cuts: Bool

    /// The window of a word looked for within `edits`; nil for an empty word.
    package init?(word: String, isPrefix: Bool, edits: Int) {
        let scalars = Array(word.unicodeScalars)
        guard let first = scalars.first else { return nil }
        self.first = first
        shortest = max(1, scalars.count - edits)
        longest = scalars.count + edits
        cuts = isPrefix
    }

    /// The window's entry for a term: the term, its cut, or nil when it is outside.
    package func entry(for term: String) -> String? {
        let scalars = term.unicodeScalars
        guard scalars.first == first, scalars.count >= shortest else { return nil }
        guard scalars.count > longest else { return term }
        return cuts ? String(String.UnicodeScalarView(scalars.prefix(longest))) : nil
    }
}
