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

    /// The terms a walk for `word` (not a prefix) within `edits` can reach, in memory (nil for a window shorter than
    /// the index holds): those with its first
    /// letter (never taken for a typo) and a length within the edits (``TermWindow``), read from
    /// `item_terms_by_window` one run per length. A walk over them finds exactly what it finds over every
    /// term. `Manocalzati` within two edits: 11,505 terms, where the walk made 7,950 B-tree seeks.
    static func window(of word: String, edits: Int, db: Database) throws -> PackedTerms? {
        guard let window = TermWindow(word: word, isPrefix: false, edits: edits), window.shortest >= shortestWindowed else { return nil }
        // The index's own condition, word for word: SQLite uses a partial index only for a query that repeats it.
        let statement = try db.cachedStatement(sql: """
            SELECT term FROM item_terms INDEXED BY item_terms_by_window
            WHERE substr(term, 1, 1) = ? AND length(term) BETWEEN ? AND ? AND length(term) >= \(shortestWindowed)
            """)
        try statement.setArguments([String(window.first), window.shortest, window.longest])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        // The index orders the window by length, then by term: a run per length, each in byte order. A term's
        // length in scalars is its bytes less their continuation bytes.
        var bytes: [UInt8] = [], spans: [PackedTerms.Span] = [], runs: [Int] = [], length = -1
        while try SQLiteCall.step(handle, db: db) {
            guard let text = sqlite3_column_text(handle, 0) else { continue }
            let term = UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, 0)))
            let scalars = term.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
            if scalars != length {
                runs.append(spans.count)
                length = scalars
            }
            spans.append(PackedTerms.Span(term, at: bytes.count))
            bytes.append(contentsOf: term)
        }
        return PackedTerms(bytes: bytes, spans: spans, runs: runs)
    }
}
