import GRDB
import GRDBSQLite

/// The window of the index's terms that a walk for one word can reach, read at once (schema 16).
extension TermDictionary {
    /// The shortest term a window holds: two edits from a word of ``TypoPlan/twoEditLength`` letters. Only
    /// two-edit walks read windows (a one-edit walk makes a few hundred probes); the index leaves shorter
    /// terms out, a third of them.
    static let shortestWindowed = TypoPlan.twoEditLength - 2

    /// The index schema 16 adds: terms by first character and length, so that a window is a few range reads.
    static let windowSchema = """
        CREATE INDEX IF NOT EXISTS item_terms_by_window ON item_terms (substr(term, 1, 1), length(term), term)
        WHERE length(term) >= \(shortestWindowed)
        """

    /// The terms a walk for `word` (not a prefix) within `edits` can reach, in memory: those with its first
    /// letter (never taken for a typo) and a length within the edits (``TermWindow``), read from
    /// `item_terms_by_window` one run per length; nil for a window reaching shorter terms than the index holds.
    /// A walk over them finds exactly what it finds over every term. `Manocalzati` within two edits: 11,505
    /// terms, where the walk made 7,950 B-tree seeks.
    static func window(of word: String, edits: Int, db: Database) throws -> PackedTerms? {
        guard let window = TermWindow(word: word, isPrefix: false, edits: edits), window.shortest >= shortestWindowed else { return nil }
        // The index's own condition, word for word: SQLite uses a partial index only for a query that repeats it.
        // Its order is the index's (no sort): by length, then by term.
        let statement = try db.cachedStatement(sql: """
            SELECT length(term), term FROM item_terms INDEXED BY item_terms_by_window
            WHERE substr(term, 1, 1) = ? AND length(term) BETWEEN ? AND ? AND length(term) >= \(shortestWindowed)
            ORDER BY length(term), term
            """)
        try statement.setArguments([String(window.first), window.shortest, window.longest])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        // A run per length, each in byte order.
        var bytes: [UInt8] = [], spans: [PackedTerms.Span] = [], runs: [Int] = [], length: Int64 = -1
        while try SQLiteCall.step(handle, db: db) {
            // A term is never NULL: NULL here is SQLite out of memory.
            guard let text = sqlite3_column_text(handle, 1) else { throw DatabaseError(resultCode: .SQLITE_NOMEM) }
            let term = UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, 1)))
            let termLength = sqlite3_column_int64(handle, 0)
            if termLength != length {
                runs.append(spans.count)
                length = termLength
            }
            spans.append(PackedTerms.Span(term, at: bytes.count))
            bytes.append(contentsOf: term)
        }
        return PackedTerms(bytes: bytes, spans: spans, runs: runs)
    }
}
