import Foundation
import GRDB
import GRDBSQLite

/// Binding values on prepared statements with SQLite's C API, for both storage modules' hot paths (bulk
/// saves, index batches, typo probes), where GRDB's argument arrays cost as much as SQLite's own work.
public enum SQLiteBinding {
    /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
    public static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds UTF-8 text; an empty string binds as an empty string (a nil pointer would bind NULL).
    @discardableResult
    public static func bindText(_ handle: OpaquePointer, _ index: Int32, _ text: String) -> Int32 {
        guard !text.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, nil) }
        var text = text
        return text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), transient) }
        }
    }

    /// Binds UTF-8 bytes as text, an empty array as an empty string.
    @discardableResult
    public static func bindText(_ handle: OpaquePointer, _ index: Int32, bytes: [UInt8]) -> Int32 {
        guard !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, nil) }
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), transient) }
        }
    }

    /// Binds a database value of any storage class; an empty blob binds a zero-length blob, not NULL.
    @discardableResult
    public static func bind(_ value: DatabaseValue, _ handle: OpaquePointer, _ index: Int32) -> Int32 {
        switch value.storage {
        case .null: return sqlite3_bind_null(handle, index)
        case .int64(let number): return sqlite3_bind_int64(handle, index, number)
        case .double(let number): return sqlite3_bind_double(handle, index, number)
        case .string(let text): return bindText(handle, index, text)
        case .blob(let data):
            guard !data.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return data.withUnsafeBytes { buffer in sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), transient) }
        }
    }
}
