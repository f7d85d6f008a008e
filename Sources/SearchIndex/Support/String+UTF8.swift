import Foundation

extension String {
    /// Whether two texts are the same bytes. Swift's `==` calls canonically equivalent texts equal (NFC
    /// `é` and NFD `e` + U+0301), but the index stores, tokenizes and compares bytes (SQLite's BINARY
    /// collation, PostgreSQL's "C"): a value that changed only in its normalization changed.
    package func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let compared = utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b -> Bool in
                guard let x = a.baseAddress, let y = b.baseAddress else { return a.isEmpty }
                return memcmp(x, y, a.count) == 0
            }
        }
        if let compared, let same = compared { return same }
        return utf8.elementsEqual(other.utf8)
    }
}
