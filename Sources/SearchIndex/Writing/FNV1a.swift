/// The 64-bit FNV-1a digest, in hex, of what the index keeps digests of (items, configurations, what
/// related objects show): equal texts always agree, and a change is missed once in 2⁶⁴.
package enum FNV1a {
    /// The digest of `text`'s UTF-8 bytes.
    package static func hex(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
