import CoreDataStore
import Foundation

/// Fuzzes the binary property list decoder and the keyed-archive reader built on it (`Z_PLIST`, an inflated
/// `Z_MODELCACHE`).
///
/// Invariants: decoding returns or throws; whatever decodes re-encodes to a plist that decodes to the same
/// value; walking every object of an archive with the reader's accessors never crashes.
enum PropertyListTarget {
    static let target = FuzzTarget(name: "plist") { data in
        guard let value = try? BinaryPropertyList.decode(data) else { return }
        if data.count <= roundTripByteLimit { checkRoundTrip(value) }
        guard let archive = try? KeyedArchive(data: data) else { return }
        walk(archive)
    }

    /// The round trip (two encodings, one decoding) costs about three times decoding the input (perf, debug with ASan,
    /// on Photos' 285 KB model): above this size it would slow the search of the decoder more than it adds.
    static let roundTripByteLimit = 1 << 16
    /// Values shared many times in the file expand into trees when encoded: beyond this many nodes the round
    /// trip would measure the fuzzer's patience, not the codec.
    static let roundTripNodeLimit = 50_000

    static func checkRoundTrip(_ value: PropertyListValue) {
        var budget = roundTripNodeLimit
        guard fitsBudget(value, &budget) else { return }
        let encoded = BinaryPropertyList.encode(value)
        let decoded: PropertyListValue
        do {
            decoded = try BinaryPropertyList.decode(encoded)
        } catch {
            fatalError("a decoded property list re-encodes to bytes the decoder refuses: \(error)")
        }
        // Byte equality of the two encodings compares reals by bit pattern (NaN included).
        guard BinaryPropertyList.encode(decoded) == encoded else {
            fatalError("a decoded property list changes when encoded and decoded again")
        }
    }

    private static func fitsBudget(_ value: PropertyListValue, _ budget: inout Int) -> Bool {
        budget -= 1
        guard budget >= 0 else { return false }
        switch value {
        case .array(let elements), .set(let elements):
            return elements.allSatisfy { fitsBudget($0, &budget) }
        case .dictionary(let dictionary):
            return dictionary.values.allSatisfy { fitsBudget($0, &budget) }
        default:
            return true
        }
    }

    /// Calls every accessor on every object, each referenced collection once (linear in the archive's size).
    static func walk(_ archive: KeyedArchive) {
        _ = archive.className(of: archive.root)
        var visited: Set<UInt64> = []
        for object in archive.objects {
            _ = archive.className(of: object)
            _ = archive.elements(of: object)
            guard let fields = object.dictionaryValue else { continue }
            for (key, field) in fields {
                _ = archive.string(object, key)
                if case .uid(let reference) = field, !visited.insert(reference).inserted { continue }
                _ = archive.array(object, key)
                _ = archive.dictionary(object, key)
            }
        }
    }
}
