import Foundation

extension String {
    /// The pieces of the string between occurrences of `separator`: exactly what Foundation's
    /// `components(separatedBy:)` returns, found by a byte search when that search finds the same.
    ///
    /// Foundation compares whole characters (grapheme clusters) by canonical equivalence: a separator inside a
    /// character (the `,` of `,\u{301}`, the `\r` of `\r\n`, a `,` after a prepended mark) does not split, and
    /// a character canonically equal to the separator (`;` and U+037E GREEK QUESTION MARK) does. For an ASCII
    /// separator both come down to checks a byte search can make: a match counts when both its ends are
    /// character boundaries, and only three scalars (U+037E, U+1FEF, U+212A) are canonically equal to an ASCII
    /// character, so a text holding one of them is left to Foundation. `componentsSeparatedByString:` on every
    /// alternate-name list of a follow storm's places was a tenth of the producing thread's time.
    func componentsSplit(by separator: String) -> [String] {
        #if canImport(Darwin)
        // Apple's Foundation searches some separators scalar by scalar ("\n" inside "\r\n"): the rules above
        // are those of swift-corelibs-foundation, measured on Linux, so elsewhere Foundation answers itself.
        return components(separatedBy: separator)
        #else
        let pattern = Array(separator.utf8)
        guard let first = pattern.first, pattern.allSatisfy({ $0 < 0x80 }) else { return components(separatedBy: separator) }
        var text = self
        let split: [String]? = text.withUTF8 { bytes -> [String]? in
            let count = bytes.count, length = pattern.count
            for index in 0..<count where bytes[index] >= 0x80 {
                // U+037E (CD BE), U+1FEF (E1 BF AF), U+212A (E2 84 AA): canonically an ASCII character.
                let next = index + 1 < count ? bytes[index + 1] : 0, third = index + 2 < count ? bytes[index + 2] : 0
                if (bytes[index] == 0xCD && next == 0xBE) || (bytes[index] == 0xE1 && next == 0xBF && third == 0xAF)
                    || (bytes[index] == 0xE2 && next == 0x84 && third == 0xAA) { return nil }
            }
            var pieces: [String] = [], pieceStart = 0, index = 0
            while index + length <= count {
                guard bytes[index] == first, (1..<length).allSatisfy({ bytes[index + $0] == pattern[$0] }),
                      isCharacterBoundary(bytes, index), isCharacterBoundary(bytes, index + length) else {
                    index += 1
                    continue
                }
                pieces.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[pieceStart..<index]), as: UTF8.self))
                index += length
                pieceStart = index
            }
            pieces.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[pieceStart..<count]), as: UTF8.self))
            return pieces
        }
        return split ?? components(separatedBy: separator)
        #endif
    }

    /// Whether byte `offset` of the string (whose UTF-8 is `bytes`) starts a character. Between two ASCII
    /// bytes only `\r\n` stays together; next to anything else, the string's own grapheme breaking decides.
    private func isCharacterBoundary(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> Bool {
        guard offset > 0, offset < bytes.count else { return true }
        let before = bytes[offset - 1], after = bytes[offset]
        if before < 0x80 && after < 0x80 { return !(before == 0x0D && after == 0x0A) }
        // Inside a scalar (a continuation byte) is no boundary; a scalar boundary is one if the string says so.
        guard after & 0xC0 != 0x80 else { return false }
        return String.Index(utf8.index(utf8.startIndex, offsetBy: offset), within: self) != nil
    }
}
