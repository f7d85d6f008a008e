import Foundation

/// Reads and writes Apple's binary property list format (`bplist00`).
///
/// Core Data keeps store metadata (`Z_METADATA.Z_PLIST`) and the model archive (`Z_MODELCACHE`) in
/// this format. Decoding is defensive: every offset is bounds-checked and reference cycles or absurd
/// nesting are rejected, because the bytes come from files we do not control.
package enum BinaryPropertyList {
    /// Why a binary property list could not be decoded.
    package struct DecodingError: Error, CustomStringConvertible, Sendable {
        /// What is wrong with the bytes.
        package var reason: String
        package var description: String { "invalid binary property list: \(reason)" }
    }

    /// The most objects a property list may hold: 200× the largest real model archive seen (Photos, 4,806).
    package static let maximumObjects = 1_000_000
    /// The most object references all its arrays, sets and dictionaries may hold together, so that a few
    /// hundred kilobytes of one-byte references cannot expand into gigabytes of decoded elements.
    package static let maximumReferences = 4_000_000
    /// The deepest nesting of arrays and dictionaries decoded.
    package static let maximumDepth = 256

    /// Decodes the top object of a binary property list.
    package static func decode(_ data: Data) throws(DecodingError) -> PropertyListValue {
        var reader = Reader(bytes: [UInt8](data))
        return try reader.decodeTop()
    }

    /// Encodes a value as a binary property list. Dictionary keys are written sorted, so the output is
    /// deterministic.
    package static func encode(_ value: PropertyListValue) -> Data {
        var writer = Writer()
        return writer.encode(value)
    }
}

// MARK: - Reading

extension BinaryPropertyList {
    private struct Reader {
        let bytes: [UInt8]
        var offsets: [Int] = []
        var objectRefSize = 0
        var inProgress: Set<Int> = []
        var cache: [Int: PropertyListValue] = [:]
        var referencesRead = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ reason: String) -> DecodingError { DecodingError(reason: reason) }

        mutating func decodeTop() throws(DecodingError) -> PropertyListValue {
            guard bytes.count >= 40, bytes[0..<8].elementsEqual("bplist00".utf8) else {
                throw fail("missing bplist00 header")
            }
            let trailer = bytes.count - 32
            let offsetIntSize = Int(bytes[trailer + 6])
            objectRefSize = Int(bytes[trailer + 7])
            let objectCount = try readUInt(at: trailer + 8, size: 8)
            let topObject = try readUInt(at: trailer + 16, size: 8)
            let tableOffset = try readUInt(at: trailer + 24, size: 8)
            guard (1...8).contains(offsetIntSize), (1...8).contains(objectRefSize) else {
                throw fail("bad integer sizes in trailer")
            }
            guard objectCount <= UInt64(BinaryPropertyList.maximumObjects) else {
                throw fail("\(objectCount) objects, more than the \(BinaryPropertyList.maximumObjects) allowed")
            }
            guard objectCount > 0, objectCount < UInt64(bytes.count), topObject < objectCount,
                  tableOffset >= 8, tableOffset < UInt64(trailer),
                  UInt64(trailer) - tableOffset >= objectCount * UInt64(offsetIntSize)
            else { throw fail("trailer points outside the data") }
            offsets.reserveCapacity(Int(objectCount))
            for index in 0..<Int(objectCount) {
                let offset = try readUInt(at: Int(tableOffset) + index * offsetIntSize, size: offsetIntSize)
                guard offset >= 8, offset < tableOffset else { throw fail("object offset out of range") }
                offsets.append(Int(offset))
            }
            return try object(Int(topObject), depth: 0)
        }

        func readUInt(at position: Int, size: Int) throws(DecodingError) -> UInt64 {
            guard position >= 0, size <= 8, position + size <= bytes.count else { throw fail("read past end") }
            var value: UInt64 = 0
            for i in 0..<size { value = value << 8 | UInt64(bytes[position + i]) }
            return value
        }

        /// Reads the length that follows a marker whose low nibble is 0xF.
        func length(marker: UInt8, at position: Int) throws(DecodingError) -> (count: Int, start: Int) {
            let nibble = Int(marker & 0x0F)
            if nibble != 0x0F { return (nibble, position + 1) }
            guard position + 1 < bytes.count else { throw fail("read past end") }
            let intMarker = bytes[position + 1]
            guard intMarker & 0xF0 == 0x10 else { throw fail("bad length marker") }
            let size = 1 << Int(intMarker & 0x0F)
            guard size <= 8 else { throw fail("length too large") }
            let count = try readUInt(at: position + 2, size: size)
            guard count <= UInt64(bytes.count) else { throw fail("length exceeds data") }
            return (Int(count), position + 2 + size)
        }

        mutating func references(count: Int, at start: Int) throws(DecodingError) -> [Int] {
            guard count >= 0, start + count * objectRefSize <= bytes.count else { throw fail("read past end") }
            referencesRead += count
            guard referencesRead <= BinaryPropertyList.maximumReferences else {
                throw fail("more than \(BinaryPropertyList.maximumReferences) object references in all")
            }
            var refs: [Int] = []
            refs.reserveCapacity(count)
            for i in 0..<count {
                let ref = try readUInt(at: start + i * objectRefSize, size: objectRefSize)
                guard ref < UInt64(offsets.count) else { throw fail("object reference out of range") }
                refs.append(Int(ref))
            }
            return refs
        }

        mutating func object(_ index: Int, depth: Int) throws(DecodingError) -> PropertyListValue {
            if let cached = cache[index] { return cached }
            guard depth < BinaryPropertyList.maximumDepth else { throw fail("nested more than \(BinaryPropertyList.maximumDepth) deep") }
            guard inProgress.insert(index).inserted else { throw fail("reference cycle") }
            defer { inProgress.remove(index) }
            let position = offsets[index]
            let marker = bytes[position]
            let value: PropertyListValue
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00: value = .null
                case 0x08: value = .bool(false)
                case 0x09: value = .bool(true)
                default: throw fail("unknown marker \(marker)")
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                if size == 16 {
                    // 128-bit integers only appear for values that do not fit in 64 bits; keep the low half.
                    value = .integer(Int64(bitPattern: try readUInt(at: position + 9, size: 8)))
                } else {
                    guard size <= 8 else { throw fail("integer too large") }
                    let raw = try readUInt(at: position + 1, size: size)
                    // 8-byte integers are signed; smaller ones are unsigned.
                    value = .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
                }
            case 0x2:
                let size = 1 << Int(marker & 0x0F)
                let raw = try readUInt(at: position + 1, size: size)
                switch size {
                case 4: value = .real(Double(Float(bitPattern: UInt32(raw))))
                case 8: value = .real(Double(bitPattern: raw))
                default: throw fail("bad real size")
                }
            case 0x3:
                guard marker == 0x33 else { throw fail("bad date marker") }
                value = .date(Double(bitPattern: try readUInt(at: position + 1, size: 8)))
            case 0x4:
                let (count, start) = try length(marker: marker, at: position)
                guard start + count <= bytes.count else { throw fail("data past end") }
                value = .data(Data(bytes[start..<start + count]))
            case 0x5:
                let (count, start) = try length(marker: marker, at: position)
                guard start + count <= bytes.count else { throw fail("string past end") }
                value = .string(String(decoding: bytes[start..<start + count], as: UTF8.self))
            case 0x6:
                let (count, start) = try length(marker: marker, at: position)
                guard start + 2 * count <= bytes.count else { throw fail("string past end") }
                var units: [UInt16] = []
                units.reserveCapacity(count)
                for i in 0..<count {
                    units.append(UInt16(bytes[start + 2 * i]) << 8 | UInt16(bytes[start + 2 * i + 1]))
                }
                value = .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                value = .uid(try readUInt(at: position + 1, size: Int(marker & 0x0F) + 1))
            case 0xA, 0xC:
                let (count, start) = try length(marker: marker, at: position)
                var elements: [PropertyListValue] = []
                elements.reserveCapacity(count)
                for ref in try references(count: count, at: start) {
                    elements.append(try object(ref, depth: depth + 1))
                }
                value = marker >> 4 == 0xA ? .array(elements) : .set(elements)
            case 0xD:
                let (count, start) = try length(marker: marker, at: position)
                let keyRefs = try references(count: count, at: start)
                let valueRefs = try references(count: count, at: start + count * objectRefSize)
                var dictionary: [String: PropertyListValue] = [:]
                dictionary.reserveCapacity(count)
                for (keyRef, valueRef) in zip(keyRefs, valueRefs) {
                    guard case .string(let key) = try object(keyRef, depth: depth + 1) else {
                        throw fail("dictionary key is not a string")
                    }
                    dictionary[key] = try object(valueRef, depth: depth + 1)
                }
                value = .dictionary(dictionary)
            default:
                throw fail("unknown marker \(marker)")
            }
            cache[index] = value
            return value
        }
    }
}

// MARK: - Writing

extension BinaryPropertyList {
    private struct Writer {
        var objects: [[UInt8]] = []
        var uniqued: [PropertyListValue: Int] = [:]

        mutating func encode(_ value: PropertyListValue) -> Data {
            // References are written 4 bytes wide: enough for any plist Searchlight produces.
            let top = add(value)
            var output = Array("bplist00".utf8)
            var offsets: [Int] = []
            for object in objects {
                offsets.append(output.count)
                output += object
            }
            let tableOffset = output.count
            let offsetSize = tableOffset > 0xFFFF_FFFF ? 8 : (tableOffset > 0xFFFF ? 4 : (tableOffset > 0xFF ? 2 : 1))
            for offset in offsets { output += bigEndian(UInt64(offset), size: offsetSize) }
            output += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), 4]
            output += bigEndian(UInt64(objects.count), size: 8)
            output += bigEndian(UInt64(top), size: 8)
            output += bigEndian(UInt64(tableOffset), size: 8)
            return Data(output)
        }

        func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
            (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
        }

        func header(_ high: UInt8, count: Int) -> [UInt8] {
            if count < 15 { return [high << 4 | UInt8(count)] }
            return [high << 4 | 0x0F] + integer(Int64(count))
        }

        func integer(_ value: Int64) -> [UInt8] {
            if value >= 0 && value <= 0xFF { return [0x10] + bigEndian(UInt64(value), size: 1) }
            if value >= 0 && value <= 0xFFFF { return [0x11] + bigEndian(UInt64(value), size: 2) }
            if value >= 0 && value <= 0xFFFF_FFFF { return [0x12] + bigEndian(UInt64(value), size: 4) }
            return [0x13] + bigEndian(UInt64(bitPattern: value), size: 8)
        }

        func reference(_ index: Int) -> [UInt8] { bigEndian(UInt64(index), size: 4) }

        mutating func add(_ value: PropertyListValue) -> Int {
            let isScalar: Bool
            switch value {
            case .array, .set, .dictionary: isScalar = false
            default: isScalar = true
            }
            if isScalar, let existing = uniqued[value] { return existing }
            let index = objects.count
            objects.append([])
            var bytes: [UInt8]
            switch value {
            case .null: bytes = [0x00]
            case .bool(let flag): bytes = [flag ? 0x09 : 0x08]
            case .integer(let number): bytes = integer(number)
            case .real(let number): bytes = [0x23] + bigEndian(number.bitPattern, size: 8)
            case .date(let seconds): bytes = [0x33] + bigEndian(seconds.bitPattern, size: 8)
            case .data(let data): bytes = header(0x4, count: data.count) + [UInt8](data)
            case .string(let string):
                if string.utf8.allSatisfy({ $0 < 0x80 }) {
                    bytes = header(0x5, count: string.utf8.count) + Array(string.utf8)
                } else {
                    let units = Array(string.utf16)
                    bytes = header(0x6, count: units.count)
                    for unit in units { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
                }
            case .uid(let uid):
                let size = uid <= 0xFF ? 1 : (uid <= 0xFFFF ? 2 : (uid <= 0xFFFF_FFFF ? 4 : 8))
                bytes = [0x80 | UInt8(size - 1)] + bigEndian(uid, size: size)
            case .array(let elements), .set(let elements):
                let refs = elements.map { add($0) }
                bytes = header(value.isSet ? 0xC : 0xA, count: refs.count) + refs.flatMap(reference)
            case .dictionary(let dictionary):
                let keys = dictionary.keys.sorted()
                let keyRefs = keys.map { add(.string($0)) }
                let valueRefs = keys.map { key in add(dictionary[key] ?? .null) }
                bytes = header(0xD, count: keys.count) + keyRefs.flatMap(reference) + valueRefs.flatMap(reference)
            }
            objects[index] = bytes
            if isScalar { uniqued[value] = index }
            return index
        }
    }
}

extension PropertyListValue {
    fileprivate var isSet: Bool {
        if case .set = self { return true }
        return false
    }
}
