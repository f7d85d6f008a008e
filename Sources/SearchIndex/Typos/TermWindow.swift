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
