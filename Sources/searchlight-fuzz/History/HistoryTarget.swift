@testable import CoreDataStore
import Foundation
import GRDB
@testable import Indexer

/// Fuzzes the history decoders: `ZCOLUMNS` bitmaps and `ZTOMBSTONE<n>` values; and the follower's own
/// record of a walk of deferred dependents, as a damaged index may hand it back.
///
/// Input: the first byte picks the column value's storage (mod 5: null, integer, real, text, blob; its high bits
/// vary the bitmap's property count), the rest is its payload — 8 big-endian bytes for numbers. Invariants: the
/// value decodes as every attribute type and re-encodes to a value that decodes the same; a bitmap decodes to
/// names that encode back to the bitmap's bits within the order. The whole input as a walk's progress: if
/// it reads, it writes back the same; walked over a list, it ends within a pass of the list; restarted, it
/// takes every dependent.
enum HistoryTarget {
    static let target = FuzzTarget(name: "history") { data in
        guard let kind = data.first else { return }
        let payload = Data(data.dropFirst())
        let value = databaseValue(kind: kind, payload: payload)
        for type in AttributeType.allCases {
            let decoded = AttributeValue(value, type: type)
            let again = AttributeValue(decoded.databaseValue, type: type)
            guard again == decoded || decoded.hasNaN else {
                fatalError("\(value) as \(type) decodes to \(decoded), which re-encodes to \(again)")
            }
        }
        checkBitmap(payload, propertyCount: max(0, payload.count * 8 + Int(kind >> 3) - 16))
        checkWalk(String(decoding: data, as: UTF8.self), size: Int(kind % 7) + 1)
    }

    static func checkWalk(_ text: String, size: Int) {
        guard let progress = DeferredDependents(text: text) else { return }
        guard DeferredDependents(text: progress.text) == progress else { fatalError("\(text) reads as \(progress), which writes \(progress.text)") }
        let countries = (0..<12).map { ManagedObjectID(storeUUID: "S", entityName: "Country", primaryKey: Int64($0 * 6 + 3)) }
        let places = (0..<12).map { ManagedObjectID(storeUUID: "S", entityName: "Place", primaryKey: Int64($0 * 6)) }
        let list: [ManagedObjectID] = countries + places
        for start in [progress, progress.restarted(at: 1)] {
            var taken: [ManagedObjectID] = []
            var next: DeferredDependents? = start
            var pages = 0
            while let current = next {
                let page = current.page(of: list, size: size)
                guard page.ids.count <= size else { fatalError("\(current) took \(page.ids.count) for a page of \(size)") }
                taken += page.ids
                next = page.next
                pages += 1
                guard pages <= list.count * 2 + 2 else { fatalError("the walk from \(text) does not end") }
            }
            if start != progress, Set(taken) != Set(list) { fatalError("restarted, \(text) took \(taken.count) of \(list.count)") }
        }
    }

    static func databaseValue(kind: UInt8, payload: Data) -> DatabaseValue {
        let bits = payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch kind % 5 {
        case 0: return .null
        case 1: return Int64(bitPattern: bits).databaseValue
        case 2: return Double(bitPattern: bits).databaseValue
        case 3: return String(decoding: payload, as: UTF8.self).databaseValue
        default: return payload.databaseValue
        }
    }

    static func checkBitmap(_ bitmap: Data, propertyCount: Int) {
        let order = (0..<propertyCount).map { "p\($0)" }
        let names = HistoryColumnBitmap.decode(bitmap, order: order)
        var expected = [UInt8]((bitmap + Data(count: max(0, (propertyCount + 7) / 8 - bitmap.count))).prefix((propertyCount + 7) / 8))
        if propertyCount % 8 != 0, let last = expected.indices.last {
            expected[last] &= UInt8(0xFF << (8 - propertyCount % 8) & 0xFF)
        }
        guard HistoryColumnBitmap.encode(Set(names), order: order) == Data(expected) else {
            fatalError("ZCOLUMNS \(bitmap.map { String(format: "%02x", $0) }.joined()) over \(propertyCount) properties decodes to \(names), which encodes differently")
        }
    }
}

extension AttributeValue {
    /// Whether a NaN (never equal to itself) is inside.
    fileprivate var hasNaN: Bool {
        switch self {
        case .double(let number), .decimal(let number): number.isNaN
        case .date(let date): date.timeIntervalSinceReferenceDate.isNaN
        default: false
        }
    }
}
