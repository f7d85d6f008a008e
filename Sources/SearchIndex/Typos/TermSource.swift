/// A sorted set of terms that typo tolerance walks as a trie (``TypoExpander``): the SQLite index's
/// `item_terms` probed one seek at a time (``TermDictionary``), or a window of another backend's terms
/// held in memory (``SortedTerms``). The walk is the same over either, so its expansions are too.
package protocol TermSource {
    /// The first term at or after `key` in byte order, seen from `key`'s first `length` scalars (what a
    /// walk asks): whether it starts with them, is exactly them, or which scalar follows them in it.
    mutating func probe(atOrAfter key: [Unicode.Scalar], under length: Int) throws -> TermProbe
}

/// What the first term at or after a key says about a prefix of the key.
package enum TermProbe: Equatable {
    /// There is no such term, or it does not start with the prefix.
    case outside
    /// The term is the prefix itself.
    case exactly
    /// The term continues the prefix with this scalar.
    case child(Unicode.Scalar)

    /// What a term (its UTF-8 bytes) says about a prefix (its UTF-8 bytes): compared as bytes, only the
    /// scalar after the prefix decoded (a walk makes thousands of probes; no `String`, no scalar array).
    init(term: UnsafeBufferPointer<UInt8>, prefix: ArraySlice<UInt8>) {
        guard term.count >= prefix.count, term.starts(with: prefix) else { self = .outside; return }
        guard term.count > prefix.count else { self = .exactly; return }
        var decoder = UTF8()
        var iterator = term[prefix.count...].makeIterator()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) { self = .child(scalar) } else { self = .child("\u{FFFD}") }
    }

    /// Writes the UTF-8 bytes of `key` into `bytes` (emptied first); returns how many of them its first
    /// `length` scalars take. Scalar order is UTF-8's byte order, so terms compare as bytes.
    static func encode(_ key: [Unicode.Scalar], under length: Int, into bytes: inout [UInt8]) -> Int {
        bytes.removeAll(keepingCapacity: true)
        var prefixBytes = 0
        for (index, scalar) in key.enumerated() {
            if index == length { prefixBytes = bytes.count }
            UTF8.encode(scalar) { bytes.append($0) }
        }
        return length >= key.count ? bytes.count : prefixBytes
    }
}

extension TermSource {
    /// The characters that follow `prefix` in some term, in order, and whether `prefix` is itself a term:
    /// one seek per child (a skip-scan of the B-tree).
    mutating func children(of prefix: [Unicode.Scalar]) throws -> (scalars: [Unicode.Scalar], isTerm: Bool) {
        var scalars: [Unicode.Scalar] = []
        var isTerm = false
        // The prefix, then the prefix and the next scalar to seek from (one buffer for every seek).
        var key = prefix
        key.reserveCapacity(prefix.count + 1)
        func seek(from next: Unicode.Scalar) {
            if key.count == prefix.count { key.append(next) } else { key[prefix.count] = next }
        }
        probing: while true {
            switch try probe(atOrAfter: key, under: prefix.count) {
            case .outside:
                break probing
            case .exactly:
                isTerm = true
                seek(from: Unicode.Scalar(1))  // past the term itself: no term holds a control character
            case .child(let child):
                scalars.append(child)
                guard let next = Self.successor(of: child) else { break probing }
                seek(from: next)
            }
        }
        return (scalars, isTerm)
    }

    /// Whether some term starts with `prefix` (or is exactly it, with `exactly`).
    mutating func contains(_ prefix: [Unicode.Scalar], exactly: Bool) throws -> Bool {
        let found = try probe(atOrAfter: prefix, under: prefix.count)
        return exactly ? found == .exactly : found != .outside
    }

    /// The next scalar value, skipping surrogates; nil after the last.
    package static func successor(of scalar: Unicode.Scalar) -> Unicode.Scalar? {
        var value = scalar.value + 1
        if value == 0xD800 { value = 0xE000 }
        return Unicode.Scalar(value)
    }
}
