/// A sorted set of terms that typo tolerance walks as a trie (``TypoExpander``): the SQLite index's
/// `item_terms` probed one seek at a time (``TermDictionary``), or a window of another backend's terms
/// held in memory (``PackedTerms``). The walk is the same over either, so its expansions are too.
package protocol TermSource {
    /// Calls `body` with the UTF-8 bytes of the first term at or after `key` (UTF-8) in byte order, or
    /// with nil when there is none; the bytes are valid only inside `body`.
    mutating func withTerm<Result>(atOrAfter key: [UInt8], _ body: (UnsafeBufferPointer<UInt8>?) -> Result) throws -> Result
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
    /// What the first term at or after `key` says about `key[..<length]`, and that term's bytes when
    /// `keeping` and it is not `.outside` (a child's ``first``). `first` is the smallest term starting with
    /// some prefix of `key[..<length]` (the walk's node), or nil: a key at or before it has it as its first
    /// term, so the answer costs no seek (the seek that found the node found it). `bytes` is the key's buffer.
    mutating func probe(_ key: [Unicode.Scalar], under length: Int, first: [UInt8]?, keeping: Bool,
                        bytes: inout [UInt8]) throws -> (found: TermProbe, term: [UInt8]?) {
        let prefixBytes = TermProbe.encode(key, under: length, into: &bytes)
        if let first, !first.lexicographicallyPrecedes(bytes) {
            let found = first.withUnsafeBufferPointer { TermProbe(term: $0, prefix: bytes[..<prefixBytes]) }
            return (found, keeping && found != .outside ? first : nil)
        }
        let key = bytes
        return try withTerm(atOrAfter: key) { term in
            guard let term else { return (.outside, nil) }
            let found = TermProbe(term: term, prefix: key[..<prefixBytes])
            return (found, keeping && found != .outside ? Array(term) : nil)
        }
    }

    /// The characters that follow `prefix` in some term, in order, each with the smallest term it
    /// starts, and whether `prefix` is itself a term: one seek per child (a skip-scan of the B-tree), the
    /// first answered from `first` (the smallest term starting with `prefix`) when known.
    mutating func children(of prefix: [Unicode.Scalar], first: [UInt8]?,
                           bytes: inout [UInt8]) throws -> (children: [(scalar: Unicode.Scalar, first: [UInt8])], isTerm: Bool) {
        var children: [(scalar: Unicode.Scalar, first: [UInt8])] = []
        var isTerm = false
        // The prefix, then the prefix and the next scalar to seek from (one buffer for every seek).
        var key = prefix
        key.reserveCapacity(prefix.count + 1)
        func seek(from next: Unicode.Scalar) {
            if key.count == prefix.count { key.append(next) } else { key[prefix.count] = next }
        }
        probing: while true {
            // The term found for a child is the smallest that starts with it: every key is at or before the child.
            let (found, term) = try probe(key, under: prefix.count, first: first, keeping: true, bytes: &bytes)
            switch found {
            case .outside:
                break probing
            case .exactly:
                isTerm = true
                seek(from: Unicode.Scalar(1))  // past the term itself: no term holds a control character
            case .child(let child):
                if let term { children.append((child, term)) }
                guard let next = Self.successor(of: child) else { break probing }
                seek(from: next)
            }
        }
        return (children, isTerm)
    }

    /// The next scalar value, skipping surrogates; nil after the last.
    package static func successor(of scalar: Unicode.Scalar) -> Unicode.Scalar? {
        var value = scalar.value + 1
        if value == 0xD800 { value = 0xE000 }
        return Unicode.Scalar(value)
    }
}
