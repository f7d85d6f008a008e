import CSearchTokenizer
import GRDB
import GRDBSQLite
import SQLiteFiles

/// The index's terms in order (`item_terms`): the dictionary typo tolerance walks as a trie.
///
/// FTS5 keeps its vocabulary inside its segments, where `fts5vocab` counts every term's documents at
/// each step, so a walk over it costs a doclist scan per probe; this table holds the same terms (those
/// of ``minimumLength`` scalars or more) in a B-tree, where a probe is one seek. The tokenizer hands the
/// writer each batch's new terms (``saveNewTerms(_:)``); terms of deleted items stay until
/// ``refresh(_:)`` (a rebuild's end) and match nothing meanwhile, so expansions are checked against FTS5.
struct TermDictionary: TermSource {
    /// Terms shorter than this are not kept: a 5-letter word with one edit matches 4-letter terms at the shortest.
    static let minimumLength = TypoPlan.minimumTermLength

    let db: Database
    /// Probes made so far, held against ``seekLimit``.
    private var seeks = 0
    /// Past this many probes the dictionary answers as if it ended: a walk stops short rather than run long.
    var seekLimit = 100_000

    init(_ db: Database) {
        self.db = db
    }

    /// The seek's statement, looked up once per walk rather than at each of its thousands of seeks.
    private var seek: Statement?

    /// The first term at or after `key`: one seek, the statement stepped through SQLite's C API and the
    /// term read as bytes (a 2-edit walk makes several thousand of these).
    mutating func withTerm<Result>(atOrAfter key: [UInt8], _ body: (UnsafeBufferPointer<UInt8>?) -> Result) throws -> Result {
        guard seeks < seekLimit else { return body(nil) }
        seeks += 1
        let statement = try seek ?? db.cachedStatement(sql: "SELECT term FROM item_terms WHERE term >= ? ORDER BY term LIMIT 1")
        if seek == nil {
            sqlite3_reset(statement.sqliteStatement)  // in case GRDB last stepped it
            seek = statement
        }
        let handle = statement.sqliteStatement
        return try key.withUnsafeBufferPointer { buffer throws -> Result in
            // Bound in place (SQLITE_STATIC, no copy): the statement is reset, and the binding cleared, before
            // the buffer goes.
            defer {
                sqlite3_reset(handle)
                sqlite3_bind_null(handle, 1)
            }
            let bound = buffer.isEmpty ? sqlite3_bind_text(handle, 1, "", 0, nil)
                : buffer.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(handle, 1, $0.baseAddress, Int32($0.count), nil) }
            guard bound == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: bound), message: String(cString: sqlite3_errmsg(db.sqliteConnection))) }
            guard try SQLiteCall.step(handle, db: db), let text = sqlite3_column_text(handle, 0) else { return body(nil) }
            return body(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, 0))))
        }
    }

    // MARK: Writing

    /// Adds the terms the tokenizer produced for documents since the last call (this transaction's
    /// inserts and updates); refreshes the whole table from the vocabulary when there were too many to keep.
    static func saveNewTerms(_ db: Database) throws {
        // Each term is inserted from inside the drain, bound and stepped with SQLite's C API: a catch-up's
        // batches hand over tens of thousands of terms (every word of every item re-indexed), and a Swift
        // string and GRDB's argument array per term were a third of the writer's time in a country rename.
        final class Sink {
            let insert: OpaquePointer, connection: OpaquePointer?
            var status = SQLITE_OK
            /// The terms new to the dictionary that windows hold: they go to their chunks after.
            var windowed: [[UInt8]] = []
            init(_ insert: OpaquePointer, _ connection: OpaquePointer?) { (self.insert, self.connection) = (insert, connection) }
        }
        let sink = Sink(try db.cachedStatement(sql: "INSERT OR IGNORE INTO item_terms (term) VALUES (?)").sqliteStatement, db.sqliteConnection)
        let status = searchlight_drain_terms(db.sqliteConnection, Unmanaged.passUnretained(sink).toOpaque()) { context, term, length in
            guard let context, let term else { return 1 }
            let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
            sqlite3_reset(sink.insert)
            sink.status = sqlite3_bind_text(sink.insert, 1, term, length, SQLiteBinding.transient)
            if sink.status == SQLITE_OK {
                let stepped = sqlite3_step(sink.insert)
                sink.status = stepped == SQLITE_DONE ? SQLITE_OK : stepped
                if stepped == SQLITE_DONE, sqlite3_changes(sink.connection) > 0 {
                    let bytes = UnsafeRawBufferPointer(start: term, count: Int(length)).assumingMemoryBound(to: UInt8.self)
                    if TermDictionary.windowKey(of: bytes) != nil { sink.windowed.append(Array(bytes)) }
                }
            }
            sqlite3_reset(sink.insert)
            return sink.status == SQLITE_OK ? 0 : 1
        }
        withExtendedLifetime(sink) {}
        guard sink.status == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: sink.status), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        switch status {
        case 0: try addToWindows(sink.windowed, db: db)
        case 1: try refresh(db)
        default: throw DatabaseError(resultCode: .SQLITE_ERROR, message: "cannot read the new terms from the searchlight tokenizer")
        }
    }

    /// Forgets the terms collected so far without saving them (those of deleted items).
    static func discardNewTerms(_ db: Database) {
        _ = searchlight_drain_terms(db.sqliteConnection, nil) { _, _, _ in 0 }
    }

    /// Rebuilds the table from FTS5's vocabulary: exactly the terms some item holds.
    static func refresh(_ db: Database) throws {
        try refill(db) {
            try db.execute(sql: "INSERT INTO item_terms (term) SELECT term FROM items_vocab WHERE length(term) >= \(minimumLength)")
        }
    }

    /// Rebuilds the table from the terms a pass over FTS5's vocabulary hands to `keep`, in byte order: the
    /// leader lists' pass at an export's end, so that the vocabulary is scanned once, not twice (each scan
    /// walks every doclist to count rows: 0.3 s of a 235,160-item export).
    static func refill(_ db: Database, from pass: (_ keep: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Void) throws {
        try refill(db) {
            let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO item_terms (term) VALUES (?)").sqliteStatement
            defer { sqlite3_reset(insert) }
            try pass { term in
                // Long enough to be kept: its scalars are its bytes less their continuation bytes.
                guard term.reduce(0, { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }) >= minimumLength else { return }
                sqlite3_reset(insert)
                let bound = term.withMemoryRebound(to: CChar.self) {
                    sqlite3_bind_text(insert, 1, $0.baseAddress, Int32($0.count), SQLiteBinding.transient)
                }
                let status = bound == SQLITE_OK ? sqlite3_step(insert) : bound
                guard status == SQLITE_DONE else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: status), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
            }
        }
    }

    /// Empties the table and runs `fill`, which fills it anew; the windows are written after, in one pass.
    private static func refill(_ db: Database, _ fill: () throws -> Void) throws {
        discardNewTerms(db)
        try db.execute(sql: "DELETE FROM item_terms")
        try fill()
        try rebuildWindows(db)
    }
}
