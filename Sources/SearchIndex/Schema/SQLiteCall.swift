import GRDB
import GRDBSQLite

/// SQLite's C API for the hot paths — the writer's per-item statements, the typo walk's probes, the R-tree
/// reads — where GRDB's per-value work (argument arrays, row boxes) costs as much as SQLite's own.
enum SQLiteCall {
    /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds UTF-8 text; an empty string binds as an empty string (a nil pointer would bind NULL).
    @discardableResult
    static func bindText(_ handle: OpaquePointer, _ index: Int32, _ text: String) -> Int32 {
        guard !text.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, nil) }
        var text = text
        return text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), transient) }
        }
    }

    /// Binds UTF-8 bytes as text, an empty array as an empty string.
    @discardableResult
    static func bindText(_ handle: OpaquePointer, _ index: Int32, bytes: [UInt8]) -> Int32 {
        guard !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, nil) }
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), transient) }
        }
    }

    /// Steps a statement once: true when it produced a row, false when it is done; any other result
    /// throws with the connection's message.
    static func step(_ handle: OpaquePointer, db: Database) throws -> Bool {
        let status = sqlite3_step(handle)
        if status == SQLITE_ROW { return true }
        if status == SQLITE_DONE { return false }
        throw DatabaseError(resultCode: ResultCode(rawValue: status), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }

    /// A column's text ("" for NULL).
    static func text(_ handle: OpaquePointer, _ column: Int32) -> String {
        sqlite3_column_text(handle, column).map { String(cString: $0) } ?? ""
    }

    /// A column's number, nil for NULL.
    static func optionalDouble(_ handle: OpaquePointer, _ column: Int32) -> Double? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_double(handle, column)
    }
}
