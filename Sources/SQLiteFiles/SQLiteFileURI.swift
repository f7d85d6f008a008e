import Foundation

/// `file:` URIs for SQLite's open flags, shared by the two storage modules so a store and an index are
/// opened read-only the same way.
public enum SQLiteFileURI {
    /// The `file:` URI of a path with SQLite's `immutable` flag: no locks, no companion files, no writes
    /// of any kind. Relative paths are made absolute; `%`, `?`, `#`, controls and non-ASCII bytes are
    /// percent-encoded, so no file name is read as a query parameter.
    public static func immutable(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var escaped = ""
        for byte in absolute.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7F...:
                escaped += String(format: "%%%02X", byte)
            default:
                escaped += String(UnicodeScalar(byte))
            }
        }
        return "file:\(escaped)?mode=ro&immutable=1"
    }
}
