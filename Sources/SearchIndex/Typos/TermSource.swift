/// A sorted set of terms that typo tolerance walks as a trie (``TypoExpander``): the SQLite index's
/// `item_terms` probed one seek at a time (``TermDictionary``), or a window of another backend's terms
/// held in memory (``SortedTerms``). The walk is the same over either, so its expansions are too.
package protocol TermSource {
    /// The first term at or after `key` in byte order, as scalars; nil past the last.
    mutating func term(atOrAfter key: [Unicode.Scalar]) throws -> [Unicode.Scalar]?
}

extension TermSource {
    /// The characters that follow `prefix` in some term, in order, and whether `prefix` is itself a term:
    /// one seek per child (a skip-scan of the B-tree).
    mutating func children(of prefix: [Unicode.Scalar]) throws -> (scalars: [Unicode.Scalar], isTerm: Bool) {
        var scalars: [Unicode.Scalar] = []
        var isTerm = false
        var key = prefix
        while let term = try term(atOrAfter: key), term.starts(with: prefix) {
            if term.count == prefix.count {
                isTerm = true
                key = prefix + [Unicode.Scalar(1)]  // past the term itself: no term holds a control character
                continue
            }
            let child = term[prefix.count]
            scalars.append(child)
            guard let next = Self.successor(of: child) else { break }
            key = prefix + [next]
        }
        return (scalars, isTerm)
    }

    /// Whether some term starts with `prefix` (or is exactly it, with `exactly`).
    mutating func contains(_ prefix: [Unicode.Scalar], exactly: Bool) throws -> Bool {
        guard let term = try term(atOrAfter: prefix) else { return false }
        return exactly ? term == prefix : term.starts(with: prefix)
    }

    /// The next scalar value, skipping surrogates; nil after the last.
    package static func successor(of scalar: Unicode.Scalar) -> Unicode.Scalar? {
        var value = scalar.value + 1
        if value == 0xD800 { value = 0xE000 }
        return Unicode.Scalar(value)
    }
}
