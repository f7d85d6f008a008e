import Foundation

extension SearchTokenizer {
    /// The stream of `text` — values joined by the field separator — made from the stream of `reference`, a
    /// list of values that shares most of them: a value `reference` also holds reuses its tokens, moved to
    /// where the value stands in `text`, and only the others are tokenized. nil when the reference stream
    /// does not split at its values (the caller then tokenizes `text` whole).
    ///
    /// Why: re-indexing an item whose text changed deletes the old text from FTS5, which needs the old
    /// text's tokens. A country renamed changes one value (its name) of each of its places' texts, beside
    /// dozens of alternate names: tokenizing the old texts whole was a tenth of the re-indexing time.
    ///
    /// It equals ``documentStream(of:)`` of `text` because ICU breaks words on both sides of the separator
    /// (U+001F, a control character), so each value's tokens and their order depend on that value alone —
    /// with one exception, which is left to tokenizing the whole text: a zero-width joiner (U+200D) right
    /// after the separator attaches to it (UAX #29 WB4) and joins the pictograph after it (WB3c), and a
    /// pictograph that is also a letter (ℹ, Ⓜ, 🅰) carries the word on, so `\u{1F}\u{200D}ℹnfo` is one word
    /// that starts at the separator. A property test and the tokenizer's fuzz target check the rest.
    static func documentStream(of text: String, sharingValuesWith reference: String, stream referenceStream: [UInt8]) -> [UInt8]? {
        let separator = UInt8(ascii: "\u{1F}")
        let referenceBytes = Array(reference.utf8), textBytes = Array(text.utf8)
        guard !containsJoiner(textBytes), !containsJoiner(referenceBytes) else { return nil }
        let referenceValues = valueRanges(referenceBytes, separator: separator)
        // Each reference value's records: a contiguous run of the stream, since tokens come in text order.
        var runs = [Range<Int>](repeating: 0..<0, count: referenceValues.count)
        var at = 0, value = 0
        while at < referenceStream.count {
            guard let record = streamRecord(referenceStream, at: at) else { return nil }
            while value < referenceValues.count && record.start >= referenceValues[value].upperBound { value += 1 }
            // A token that crosses a separator (never, by the argument above) makes the splice unsound.
            guard value < referenceValues.count, record.start >= referenceValues[value].lowerBound,
                  record.end <= referenceValues[value].upperBound else { return nil }
            if runs[value].isEmpty { runs[value] = at..<record.next } else { runs[value] = runs[value].lowerBound..<record.next }
            at = record.next
        }
        var known: [ValueBytes: Int] = [:]
        for (index, range) in referenceValues.enumerated() where known[ValueBytes(referenceBytes[range])] == nil {
            known[ValueBytes(referenceBytes[range])] = index
        }
        var stream: [UInt8] = []
        stream.reserveCapacity(referenceStream.count + 64)
        for range in valueRanges(textBytes, separator: separator) {
            if let index = known[ValueBytes(textBytes[range])] {
                // The value's records with their byte offsets moved from the reference's place to this one.
                let shift = range.lowerBound - referenceValues[index].lowerBound
                var at = runs[index].lowerBound
                while at < runs[index].upperBound, let record = streamRecord(referenceStream, at: at) {
                    appendRecord(referenceStream[at..<record.next], shiftedBy: shift, to: &stream)
                    at = record.next
                }
            } else if !range.isEmpty {
                guard let own = documentStream(of: String(decoding: textBytes[range], as: UTF8.self)) else { return nil }
                var at = 0
                while at < own.count, let record = streamRecord(own, at: at) {
                    appendRecord(own[at..<record.next], shiftedBy: range.lowerBound, to: &stream)
                    at = record.next
                }
            }
        }
        return stream
    }

    /// A value's bytes as a dictionary key, hashed in one call (an array slice hashes byte by byte: most of
    /// the splice's time).
    private struct ValueBytes: Hashable {
        let bytes: ArraySlice<UInt8>
        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
        func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
        static func == (left: ValueBytes, right: ValueBytes) -> Bool {
            left.bytes.count == right.bytes.count && left.bytes.withUnsafeBytes { a in right.bytes.withUnsafeBytes { b in a.elementsEqual(b) } }
        }
    }

    /// Whether UTF-8 bytes hold U+200D ZERO WIDTH JOINER (E2 80 8D).
    private static func containsJoiner(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 3 else { return false }
        for index in 0..<(bytes.count - 2) where bytes[index] == 0xE2 && bytes[index + 1] == 0x80 && bytes[index + 2] == 0x8D { return true }
        return false
    }

    /// The byte ranges of the values of a joined text.
    private static func valueRanges(_ bytes: [UInt8], separator: UInt8) -> [Range<Int>] {
        var ranges: [Range<Int>] = [], start = 0
        for (index, byte) in bytes.enumerated() where byte == separator {
            ranges.append(start..<index)
            start = index + 1
        }
        ranges.append(start..<bytes.count)
        return ranges
    }

    /// The record at `at` of a stream (token_offers.h's format: colocated, start, end and length as four
    /// native 32-bit integers, then the token's bytes): its byte range in the text and where the next begins.
    private static func streamRecord(_ stream: [UInt8], at: Int) -> (start: Int, end: Int, next: Int)? {
        let header = 16  // TOKEN_RECORD_HEADER: four C ints
        guard at + header <= stream.count else { return nil }
        func integer(_ field: Int) -> Int {
            stream.withUnsafeBytes { Int(Int32(bitPattern: $0.loadUnaligned(fromByteOffset: at + 4 * field, as: UInt32.self))) }
        }
        let length = integer(3)
        guard length >= 0, length <= stream.count - at - header else { return nil }
        return (integer(1), integer(2), at + header + length)
    }

    /// Appends one record with its start and end moved by `shift` bytes.
    private static func appendRecord(_ record: ArraySlice<UInt8>, shiftedBy shift: Int, to stream: inout [UInt8]) {
        let first = stream.count
        stream.append(contentsOf: record)
        stream.withUnsafeMutableBytes { bytes in
            for field in 1...2 {
                let offset = first + 4 * field
                let moved = Int32(bitPattern: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) + Int32(truncatingIfNeeded: shift)
                bytes.storeBytes(of: UInt32(bitPattern: moved), toByteOffset: offset, as: UInt32.self)
            }
        }
    }
}
