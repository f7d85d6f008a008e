import Foundation

/// SQLite's `BINARY` collation, the order of `ORDER BY uri` and of every text comparison in SQL: UTF-8 bytes,
/// a prefix first. Swift's `<` is another order (it takes canonically equivalent text for equal), so code
/// that must agree with SQL compares with this.
package enum BinaryCollation {
    /// Whether `a` comes before `b` in SQLite's `BINARY` order.
    package static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// Whether `a` and `b` are equal in SQLite's `BINARY` order: the same bytes. Swift's `==` calls NFC `é`
    /// and NFD `e` + U+0301 equal; the index stores, tokenizes and compares bytes, so a text that changed only
    /// in its normalization changed. (`memcmp` over native strings' contiguous bytes.)
    package static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let compared = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Bool in
                guard let p = x.baseAddress, let q = y.baseAddress else { return x.isEmpty }
                return memcmp(p, q, x.count) == 0
            }
        }
        return (compared ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }
}
