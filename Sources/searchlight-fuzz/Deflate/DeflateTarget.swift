@testable import CoreDataStore
import Foundation

/// Fuzzes raw DEFLATE: inflating arbitrary bytes under a limit, and `inflate(deflate(x)) == x`.
///
/// The round trip inflates under a limit of exactly the input's size, so the output-growth loop's boundary
/// (an output that fills the limit to the byte) is exercised on every input.
enum DeflateTarget {
    static let limit = 1 << 20

    static let target = FuzzTarget(name: "deflate") { data in
        if let inflated = try? RawDeflate.inflate(data, limit: limit), inflated.count > limit {
            fatalError("inflate returned \(inflated.count) bytes, over its limit of \(limit)")
        }
        let deflated = RawDeflate.deflate(data)
        let restored: Data
        do {
            restored = try RawDeflate.inflate(deflated, limit: data.count)
        } catch {
            fatalError("inflate(deflate(x)) failed for \(data.count) bytes (\(deflated.count) deflated): \(error)")
        }
        guard restored == data else {
            fatalError("inflate(deflate(x)) returned \(restored.count) bytes that differ from the \(data.count) given")
        }
    }
}
