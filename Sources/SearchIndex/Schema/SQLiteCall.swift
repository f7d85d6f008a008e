import GRDB
import GRDBSQLite
import SQLiteFiles

/// SQLite's C API for the hot paths — the writer's per-item statements, the typo walk's probes, the R-tree
/// reads — where GRDB's per-value work (argument arrays, row boxes) costs as much as SQLite's own.
enum SQLiteCall {
    /// Binds UTF-8 text (see ``SQLiteBinding``, shared with the store writer).
    @discardableResult
    static func bindText(_ handle: OpaquePointer, _ index: Int32, _ text: String) -> Int32 { SQLiteBinding.bindText(handle, index, text) }

    /// Binds UTF-8 bytes as text.
    @discardableResult
    static func bindText(_ handle: OpaquePointer, _ index: Int32, bytes: [UInt8]) -> Int32 { SQLiteBinding.bindText(handle, index, bytes: bytes) }

    /// Binds any database value.
    @discardableResult
    static func bind(_ value: DatabaseValue, _ handle: OpaquePointer, _ index: Int32) -> Int32 { SQLiteBinding.bind(value, handle, index) }

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
