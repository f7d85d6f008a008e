/// Unsigned LEB128 varints, as the index's packed rows store counts and gaps: seven bits a byte, the lowest
/// first, the high bit set on all but the last.
enum LEB128 {
    /// Appends `value`'s bytes.
    static func append<Bytes: RangeReplaceableCollection<UInt8>>(_ value: UInt64, to bytes: inout Bytes) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// The varint at `offset` of `bytes`, `offset` moved past it; nil when the bytes end inside it, or it runs
    /// past `maximumBytes` bytes or 64 bits (a damaged row).
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: inout Int, maximumBytes: Int = 10) -> UInt64? {
        var value: UInt64 = 0, shift: UInt64 = 0
        for _ in 0..<maximumBytes {
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            offset += 1
            // The tenth byte holds the 64th bit alone.
            guard shift < 63 || byte & 0x7E == 0 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
