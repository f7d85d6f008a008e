/// SQLite's `BINARY` collation, the order of `ORDER BY uri` and of every text comparison in SQL: UTF-8 bytes,
/// a prefix first. Swift's `<` is another order (it takes canonically equivalent text for equal), so code
/// that must agree with SQL compares with this.
package enum BinaryCollation {
    /// Whether `a` comes before `b` in SQLite's `BINARY` order.
    package static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
}
