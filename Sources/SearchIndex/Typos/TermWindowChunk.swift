/// A run of the typo dictionary's terms that share a first character and a length, in byte order, as one
/// row of `term_windows` (schema 17): each term's byte count (LEB128) and bytes, one after another.
///
/// A two-edit window is tens of thousands of terms (`Sangoleng`: 27,216 terms of 7 to 11 letters starting
/// with `s`, at 939,632 places); read one index row per term, SQLite's step cost half of a typo-tolerant
/// search. Read as chunks of ``capacity`` terms it is a few hundred steps, and the terms are measured in
/// place, straight from the row's bytes. A new term rewrites one chunk, which splits in two when full.
package struct TermWindowChunk: Equatable {
    /// The most terms a chunk holds: about 700 bytes of terms of 10 letters, within the part of a row an
    /// index page of 4 KiB keeps in place (1,002 bytes), so a chunk is read without an overflow page. Chunks
    /// of longer terms (past 14 ASCII letters, or 7 of a two-byte script) spill to one, read at a page more.
    package static let capacity = 64

    /// The terms, in byte order.
    package var terms: [[UInt8]]

    /// A chunk of `terms`, in byte order.
    package init(terms: [[UInt8]]) {
        self.terms = terms
    }

    /// The chunk a row holds; throws ``Damage`` for bytes that are not a chunk.
    package init(decoding bytes: UnsafeRawBufferPointer) throws(Damage) {
        var terms: [[UInt8]] = []
        try Self.forEachTerm(in: bytes) { terms.append(Array($0)) }
        self.terms = terms
    }

    /// The row's bytes.
    package var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(terms.reduce(0) { $0 + $1.count + 1 })
        for term in terms {
            LEB128.append(UInt64(term.count), to: &bytes)
            bytes += term
        }
        return bytes
    }

    /// Adds a term in its place; false if the chunk holds it already.
    package mutating func insert(_ term: [UInt8]) -> Bool {
        let low = terms.partitionIndex { !$0.lexicographicallyPrecedes(term) }
        guard low == terms.count || terms[low] != term else { return false }
        terms.insert(term, at: low)
        return true
    }

    /// Bytes that are not a chunk: a damaged index.
    package struct Damage: Error {}

    /// Hands each term of a row's bytes to `body`, in order, without copying it.
    package static func forEachTerm(in bytes: UnsafeRawBufferPointer, _ body: (UnsafeBufferPointer<UInt8>) -> Void) throws(Damage) {
        var offset = 0
        while offset < bytes.count {
            // A count cut off by the row's end, or too long for any row (5 bytes: 35 bits), is damage.
            guard let count = LEB128.read(bytes, at: &offset, maximumBytes: 5), count <= UInt64(bytes.count - offset) else { throw Damage() }
            body(UnsafeBufferPointer(rebasing: bytes.assumingMemoryBound(to: UInt8.self)[offset..<(offset + Int(count))]))
            offset += Int(count)
        }
    }
}
