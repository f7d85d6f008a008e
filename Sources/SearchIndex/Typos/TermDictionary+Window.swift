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

    /// The terms within `edits` of `word` (not a prefix), with their edits, the word itself among them if it is
    /// a term; nil for a window reaching shorter terms than the index holds. The window (terms with the word's
    /// first letter, never taken for a typo, and a length within the edits: ``TermWindow``) is read from
    /// `item_terms_by_window` one run per length and measured as it is read (``EditDistanceScan``): exactly
    /// what a walk of every term finds. `Manocalzati` within two edits: 11,505 terms, where the walk made
    /// 7,950 B-tree seeks.
    static func windowMatches(of word: String, edits: Int, db: Database) throws -> [[Unicode.Scalar]: Int]? {
        guard let window = TermWindow(word: word, isPrefix: false, edits: edits), window.shortest >= shortestWindowed else { return nil }
        // The index's own condition, word for word: SQLite uses a partial index only for a query that repeats it.
        // Its order is the index's (no sort): by length, then by term, so that a term shares most of its prefix
        // with the one before.
        let statement = try db.cachedStatement(sql: """
            SELECT term FROM item_terms INDEXED BY item_terms_by_window
            WHERE substr(term, 1, 1) = ? AND length(term) BETWEEN ? AND ? AND length(term) >= \(shortestWindowed)
            ORDER BY length(term), term
            """)
        try statement.setArguments([String(window.first), window.shortest, window.longest])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        var scan = EditDistanceScan(word: word, maximumEdits: edits)
        while try SQLiteCall.step(handle, db: db) {
            // A term is never NULL: NULL here is SQLite out of memory.
            guard let text = sqlite3_column_text(handle, 0) else { throw DatabaseError(resultCode: .SQLITE_NOMEM) }
            scan.add(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, 0))))
        }
        return scan.found
    }
}
