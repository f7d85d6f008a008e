import Foundation
import GRDBSQLite

extension AttributeValue {
    /// Decodes column `index` of the current row of a stepped statement as the attribute type says.
    ///
    /// The hot path of bulk fetches: it reads SQLite's storage class directly, without a GRDB row, and
    /// decodes it as every other read does (``init(_:type:)``).
    init(statement: OpaquePointer, column index: Int32, type: AttributeType) {
        let stored: StoredValue
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL:
            stored = .null
        case SQLITE_INTEGER:
            stored = .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT:
            stored = .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, index))
            stored = .text(sqlite3_column_text(statement, index).map {
                String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
            } ?? "")
        default:
            let count = Int(sqlite3_column_bytes(statement, index))
            stored = .blob(sqlite3_column_blob(statement, index).map { Data(bytes: $0, count: count) } ?? Data())
        }
        self.init(stored, type: type)
    }
}
