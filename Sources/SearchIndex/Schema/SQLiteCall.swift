import CSearchTokenizer
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

    /// Binds bytes as a blob (an empty array as a zero-length blob, not NULL).
    @discardableResult
    static func bindBlob(_ handle: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) -> Int32 {
        guard !bytes.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), SQLiteBinding.transient) }
    }

    /// Binds any database value.
    @discardableResult
    static func bind(_ value: DatabaseValue, _ handle: OpaquePointer, _ index: Int32) -> Int32 { SQLiteBinding.bind(value, handle, index) }

    /// Steps a statement once: true when it produced a row, false when it is done; any other result
    /// throws with the connection's message.
    /// A failed statement is reset before the error is thrown: `sqlite3_reset` repeats a failed step's
    /// error once, and GRDB, resetting the cached statement at its next use, would throw it again — a
    /// search stopped by its time limit made the next search on that connection fail as interrupted.
    static func step(_ handle: OpaquePointer, db: Database) throws -> Bool {
        let status = sqlite3_step(handle)
        if status == SQLITE_ROW { return true }
        if status == SQLITE_DONE { return false }
        let error = DatabaseError(resultCode: ResultCode(rawValue: status), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        sqlite3_reset(handle)
        throw error
    }

    /// Runs `body` with `ids` (sorted) bound to the statement's last parameter as the pointer
    /// `searchlight_in_ids(rowid, ?)` reads; the binding is cleared after, since a cached statement keeps its
    /// bindings past a reset and the set lives only in this scope. The statement's other arguments are set
    /// before; `body` fetches without giving new ones.
    static func withIDSet<T>(_ ids: [Int64], boundTo statement: Statement, _ body: () throws -> T) throws -> T {
        try ids.withUnsafeBufferPointer { buffer in
            var set = searchlight_id_set(ids: buffer.baseAddress, count: buffer.count)
            return try withUnsafePointer(to: &set) { pointer in
                try withBinding(statement, parameter: sqlite3_bind_parameter_count(statement.sqliteStatement), of: "the row ids",
                                bind: { searchlight_bind_id_set($0, $1, pointer) }, body)
            }
        }
    }

    /// Runs `body` with the request's place filters bound to the statement's parameter `parameter` as the
    /// pointer `searchlight_placed(latitude, longitude, ?)` reads: it asks ``SearchRequest/placement(latitude:longitude:)``
    /// itself, so SQL keeps exactly what the search keeps. Cleared after, like ``withIDSet(_:boundTo:_:)``.
    static func withPlacement<T>(of request: SearchRequest, boundTo statement: Statement, parameter: Int32, _ body: () throws -> T) throws -> T {
        let filters = PlaceFilters(request)
        return try withExtendedLifetime(filters) {
            var placement = searchlight_placement(context: Unmanaged.passUnretained(filters).toOpaque()) { context, latitude, longitude, located in
                guard let context else { return 0 }
                let request = Unmanaged<PlaceFilters>.fromOpaque(context).takeUnretainedValue().request
                return request.placement(latitude: located != 0 ? latitude : nil, longitude: located != 0 ? longitude : nil) != nil ? 1 : 0
            }
            return try withUnsafePointer(to: &placement) { pointer in
                try withBinding(statement, parameter: parameter, of: "the place filters", bind: { searchlight_bind_placement($0, $1, pointer) }, body)
            }
        }
    }

    /// Runs `body` with a term-vector query bound to parameter `parameter` as the pointer
    /// `searchlight_vector_rank(…, ?)` reads. Cleared after, like ``withIDSet(_:boundTo:_:)``; the caller keeps
    /// the query alive.
    static func withVectorQuery<T>(_ query: OpaquePointer, boundTo statement: Statement, parameter: Int32, _ body: () throws -> T) throws -> T {
        try withBinding(statement, parameter: parameter, of: "the term-vector query", bind: { searchlight_bind_vector_query($0, $1, query) }, body)
    }

    /// Runs `body` with typo words bound to parameter `parameter` as the pointer `searchlight_typo_near(…, ?)`
    /// reads. Cleared after; the caller keeps the words alive.
    static func withTypoWords<T>(_ words: OpaquePointer, boundTo statement: Statement, parameter: Int32, _ body: () throws -> T) throws -> T {
        try withBinding(statement, parameter: parameter, of: "the typo words", bind: { searchlight_bind_typo_words($0, $1, words) }, body)
    }

    /// Runs `body` with a pointer bound to a parameter (`bind`), then resets the statement and clears the
    /// binding: a cached statement keeps its bindings past a reset, and the pointer lives only in the caller.
    private static func withBinding<T>(_ statement: Statement, parameter: Int32, of what: String,
                                       bind: (OpaquePointer, Int32) -> Int32, _ body: () throws -> T) throws -> T {
        let handle = statement.sqliteStatement
        let status = bind(handle, parameter)
        guard status == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: status), message: "cannot bind \(what)") }
        defer {
            sqlite3_reset(handle)
            sqlite3_bind_null(handle, parameter)
        }
        return try body()
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

/// A search's place filters, kept alive while a statement calls back into them (`searchlight_placed`).
private final class PlaceFilters {
    let request: SearchRequest
    init(_ request: SearchRequest) { self.request = request }
}
