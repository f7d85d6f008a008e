import Foundation

/// Terms held in memory in byte order, packed in one buffer: the window of PostgreSQL's terms a prefix's walk
/// can reach (``TermWindow``), probed by binary search, where a probe of the database would be a round trip. A
/// probe compares a dozen short byte strings in one buffer.
package struct PackedTerms: TermSource {
    /// Where a term's bytes lie in the buffer, and its first eight bytes as a big-endian number (zeros after
    /// a shorter term): most comparisons end there, without reading the buffer.
    struct Span {
        var start: Int32, end: Int32, prefix: UInt64

        /// The span of `term`, which lies in the buffer at `start`.
        init(_ term: UnsafeBufferPointer<UInt8>, at start: Int) {
            self.start = Int32(truncatingIfNeeded: start)
            end = Int32(truncatingIfNeeded: start + term.count)
            prefix = Self.prefix(of: term)
        }

        /// The first eight bytes of `bytes` as a big-endian number, zeros after a shorter string.
        static func prefix(of bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var prefix: UInt64 = 0
            for index in 0..<8 { prefix = prefix << 8 | UInt64(index < bytes.count ? bytes[index] : 0) }
            return prefix
        }
    }

    /// The terms' UTF-8 bytes, one after another, as they were read.
    private let bytes: [UInt8]
    /// Each term's bytes, in byte order.
    private let spans: [Span]

    /// The number of terms held.
    package var count: Int { spans.count }

    /// The terms, in any order; duplicates are kept once.
    package init(_ terms: [String]) {
        var sorted = terms.map { Array($0.utf8) }
        sorted.sort { $0.lexicographicallyPrecedes($1) }
        var bytes: [UInt8] = [], spans: [Span] = [], previous: [UInt8]? = nil
        for term in sorted where term != previous {
            term.withUnsafeBufferPointer { spans.append(Span($0, at: bytes.count)) }
            bytes.append(contentsOf: term)
            previous = term
        }
        self.bytes = bytes
        self.spans = spans
    }

    /// How two byte strings order: bytes compared, then lengths.
    private static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let first = a.baseAddress, let second = b.baseAddress {
            let order = memcmp(first, second, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }

    /// Where the last probe's term lies: a walk probes in nearly ascending order (a trie's nodes depth first), so
    /// the next answer is most often a few terms further on.
    private var cursor = 0

    /// The first term at or after `key`: searched onward from the last probe's answer when `key` lies past the
    /// term before it (steps of 1, 2, 4… then a binary search of the last step), by binary search otherwise.
    package mutating func withTerm<Result>(atOrAfter key: [UInt8], _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        let found = bytes.withUnsafeBufferPointer { buffer in
            key.withUnsafeBufferPointer { key -> Int in
                let keyPrefix = Span.prefix(of: key)
                func precedes(_ index: Int) -> Bool {
                    let span = spans[index]
                    return span.prefix != keyPrefix ? span.prefix < keyPrefix
                        : Self.compare(UnsafeBufferPointer(rebasing: buffer[Int(span.start)..<Int(span.end)]), key) < 0
                }
                // Every term before low precedes the key; the one at high does not (high == count: none).
                var (low, high) = (0, spans.count)
                if cursor > 0, cursor <= spans.count, precedes(cursor - 1) {
                    low = cursor
                    var step = 1
                    while low < spans.count {
                        let probe = min(low + step - 1, spans.count - 1)
                        guard precedes(probe) else { high = probe; break }
                        low = probe + 1
                        step *= 2
                    }
                }
                while low < high {
                    let middle = (low + high) / 2
                    if precedes(middle) { low = middle + 1 } else { high = middle }
                }
                return low
            }
        }
        cursor = found
        guard found < spans.count else { return body(nil) }
        let span = spans[found]
        return bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[Int(span.start)..<Int(span.end)])) }
    }
}
