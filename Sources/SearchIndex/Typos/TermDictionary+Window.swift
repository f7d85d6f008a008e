import Foundation
import GRDB
import GRDBSQLite

/// The window of the index's terms that a walk for one word can reach, read at once: the dictionary's terms
/// by first character and length, in chunks (schema 17; every term since schema 19).
extension TermDictionary {
    /// The shortest term a window holds: every term of the dictionary (schema 19; schema 17 held terms of 7
    /// letters or more, for two-edit words). A one-edit word's window is read too: its walk made a few hundred
    /// seeks of one term each, where its window is a few hundred rows of 64 (`Blato`: 11,684 terms of 4 to 6
    /// letters starting with `b`; the search 1.25 → 0.6 ms at 939,632 places).
    static let shortestWindowed = TypoPlan.minimumTermLength

    /// The table schema 17 adds: the dictionary's terms of ``shortestWindowed`` scalars or more, by first
    /// scalar (its UTF-8 bytes) and length in scalars (``windowKey(of:)``), in chunks of terms in byte order
    /// (``TermWindowChunk``), each keyed by its first term. It holds exactly those terms of
    /// `item_terms`: the writer adds each new term to its chunk in the transaction that adds it there, and a
    /// refill writes both anew.
    static let windowSchema = """
        CREATE TABLE IF NOT EXISTS term_windows (
            first BLOB NOT NULL, length INTEGER NOT NULL, low BLOB NOT NULL, terms BLOB NOT NULL,
            PRIMARY KEY (first, length, low)) WITHOUT ROWID
        """

    /// The terms within `edits` of `word` (not a prefix), with their edits, the word itself among them if it is
    /// a term; nil for a window reaching shorter terms than the index holds. The window (terms with the word's
    /// first letter, never taken for a typo, and a length within the edits: ``TermWindow``) is read one chunk
    /// per row and measured in place (``EditDistanceScan``): exactly what a walk of every term finds.
    /// `Sangoleng` within two edits: 27,216 terms in 427 rows (at 939,632 places), where one row per term cost
    /// 1.2 ms of SQLite steps.
    static func windowMatches(of word: String, edits: Int, db: Database) throws -> [[Unicode.Scalar]: Int]? {
        guard let window = TermWindow(word: word, isPrefix: false, edits: edits), window.shortest >= shortestWindowed else { return nil }
        // By length, then by term: a term shares most of its prefix with the one before.
        let statement = try db.cachedStatement(sql: """
            SELECT terms FROM term_windows WHERE first = ? AND length BETWEEN ? AND ? ORDER BY length, low
            """)
        try statement.setArguments([Data(String(window.first).utf8), window.shortest, window.longest])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        var scan = EditDistanceScan(word: word, maximumEdits: edits)
        while try SQLiteCall.step(handle, db: db) {
            // The pointer first, then its size (SQLite's advice: a conversion would change the size).
            let bytes = sqlite3_column_blob(handle, 0), count = Int(sqlite3_column_bytes(handle, 0))
            // An empty chunk is never written; a NULL pointer for a non-empty one is SQLite out of memory.
            guard count > 0 else { continue }
            guard let bytes else { throw DatabaseError(resultCode: .SQLITE_NOMEM) }
            do {
                try TermWindowChunk.forEachTerm(in: UnsafeRawBufferPointer(start: bytes, count: count)) { scan.add($0) }
            } catch {
                throw damagedWindows
            }
        }
        return scan.found
    }

    /// The first scalar (its UTF-8 bytes) and the length in scalars of a term, as ``TermWindow`` and the scan
    /// read a word (ill-formed bytes as U+FFFD, as Swift decodes them), or nil for a term too short for windows.
    static func windowKey(of term: some Collection<UInt8>) -> (first: [UInt8], length: Int)? {
        // Most terms are ASCII: a byte a scalar.
        if term.allSatisfy({ $0 < 0x80 }) {
            guard term.count >= shortestWindowed, let first = term.first else { return nil }
            return ([first], term.count)
        }
        var first: Unicode.Scalar?, length = 0
        _ = transcode(term.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: false) { scalar in
            if first == nil { first = Unicode.Scalar(scalar) }
            length += 1
        }
        guard length >= shortestWindowed, let first else { return nil }
        return (Array(String(first).utf8), length)
    }

    /// The most new terms added chunk by chunk (see ``addToWindows(_:db:)``).
    static let mostAddedTerms = 20_000

    /// Adds terms new to `item_terms` to their chunks, in any order; a full chunk splits in two. A damaged
    /// chunk (a tool's or a disk's) is not written to: every chunk is written anew from `item_terms`, which
    /// holds the new terms already, so that the writer repairs what a search refuses.
    static func addToWindows(_ terms: [[UInt8]], db: Database) throws {
        guard !terms.isEmpty else { return }
        // Past this many, writing every chunk anew in one pass costs less than a chunk rewritten per term.
        guard terms.count <= mostAddedTerms else { return try rebuildWindows(db) }
        do {
            try addEachToWindows(terms, db: db)
        } catch is DamagedChunk {
            try rebuildWindows(db)
        }
    }

    /// A chunk row that is not one.
    private struct DamagedChunk: Error {}

    /// Adds terms to their chunks one by one (``addToWindows(_:db:)``); throws ``DamagedChunk`` on a damaged chunk.
    private static func addEachToWindows(_ terms: [[UInt8]], db: Database) throws {
        let containing = try db.cachedStatement(sql: """
            SELECT low, terms FROM term_windows WHERE first = ? AND length = ? AND low <= ? ORDER BY low DESC LIMIT 1
            """)
        let following = try db.cachedStatement(sql: "SELECT low, terms FROM term_windows WHERE first = ? AND length = ? ORDER BY low LIMIT 1")
        let delete = try db.cachedStatement(sql: "DELETE FROM term_windows WHERE first = ? AND length = ? AND low = ?")
        let upsert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO term_windows (first, length, low, terms) VALUES (?, ?, ?, ?)")
        defer { releaseArguments(of: [containing, following, delete, upsert]) }
        for term in terms {
            guard let (first, length) = windowKey(of: term) else { continue }
            let key: StatementArguments = [Data(first), length]
            // The chunk whose range holds the term; before the first chunk of its key, that chunk, keyed anew.
            var low: Data, chunk: TermWindowChunk
            if let row = try Row.fetchOne(containing, arguments: key + [Data(term)]) {
                (low, chunk) = try self.chunk(row)
            } else if let row = try Row.fetchOne(following, arguments: key) {
                (low, chunk) = try self.chunk(row)
                try delete.execute(arguments: key + [low])
                low = Data(term)
            } else {
                low = Data(term)
                chunk = TermWindowChunk(terms: [])
            }
            guard chunk.insert(term) else { continue }
            try writeChunk(chunk, first: first, length: length, replacing: low, with: upsert)
        }
    }

    /// Writes `chunk` as the row keyed `low` (replacing it), split in two halves when it is past capacity.
    private static func writeChunk(_ chunk: TermWindowChunk, first: [UInt8], length: Int, replacing low: Data, with upsert: Statement) throws {
        guard chunk.terms.count > TermWindowChunk.capacity else {
            try upsert.execute(arguments: [Data(first), length, low, Data(chunk.encoded)])
            return
        }
        let half = chunk.terms.count / 2
        try upsert.execute(arguments: [Data(first), length, low, Data(TermWindowChunk(terms: Array(chunk.terms[..<half])).encoded)])
        try upsert.execute(arguments: [Data(first), length, Data(chunk.terms[half]), Data(TermWindowChunk(terms: Array(chunk.terms[half...])).encoded)])
    }

    /// What a search reading a chunk that is not one says (the path is filled in by the caller's error mapping):
    /// rebuild the index (a write adding a term repairs it too).
    private static var damagedWindows: SearchIndexError { .notAnIndex(path: "", detail: "its typo dictionary is damaged") }

    /// Clears the last arguments cached statements keep: a chunk's bytes would stay referenced by the
    /// statement cache until the connection closes (through an enum payload LeakSanitizer does not scan:
    /// the fuzz targets reported them as leaks).
    private static func releaseArguments(of statements: [Statement]) {
        for statement in statements { statement.setUncheckedArguments([]) }
    }

    /// A row's key and chunk; a value of another type than a blob, or bytes that are not a chunk (a damaged
    /// index), throw ``DamagedChunk``, never trap.
    private static func chunk(_ row: Row) throws(DamagedChunk) -> (low: Data, chunk: TermWindowChunk) {
        guard case .blob(let low) = (row[0] as DatabaseValue).storage, case .blob(let bytes) = (row[1] as DatabaseValue).storage else {
            throw DamagedChunk()
        }
        do {
            return (low, try bytes.withUnsafeBytes { raw throws(TermWindowChunk.Damage) in try TermWindowChunk(decoding: raw) })
        } catch {
            throw DamagedChunk()
        }
    }

    /// Writes every chunk anew from `item_terms`, read once in byte order: a first character's terms are
    /// one run of it, so only that run's terms are held at a time (`s`: some 50,000 at 939,632 places). (Terms
    /// starting with ill-formed bytes, a damaged index's, share U+FFFD across runs: their chunks are appended to.)
    static func rebuildWindows(_ db: Database) throws {
        // Made here too: migrations before schema 17 refill the dictionary.
        try db.execute(sql: windowSchema)
        try db.execute(sql: "DELETE FROM term_windows")
        let insert = try db.cachedStatement(sql: "INSERT INTO term_windows (first, length, low, terms) VALUES (?, ?, ?, ?)")
        defer { releaseArguments(of: [insert]) }
        var first: [UInt8] = [], byLength: [Int: [[UInt8]]] = [:]
        func flush() throws {
            for (length, terms) in byLength.sorted(by: { $0.key < $1.key }) {
                var start = 0
                while start < terms.count {
                    let end = min(terms.count, start + TermWindowChunk.capacity)
                    let chunk = TermWindowChunk(terms: Array(terms[start..<end]))
                    try insert.execute(arguments: [Data(first), length, Data(terms[start]), Data(chunk.encoded)])
                    start = end
                }
            }
            byLength.removeAll(keepingCapacity: true)
        }
        let terms = try db.cachedStatement(sql: "SELECT CAST(term AS BLOB) FROM item_terms ORDER BY term")
        let handle = terms.sqliteStatement
        defer { sqlite3_reset(handle) }
        while try SQLiteCall.step(handle, db: db) {
            let bytes = sqlite3_column_blob(handle, 0), count = Int(sqlite3_column_bytes(handle, 0))
            guard count > 0, let bytes else { continue }
            let term = UnsafeRawBufferPointer(start: bytes, count: count).assumingMemoryBound(to: UInt8.self)
            guard let key = windowKey(of: term) else { continue }
            if key.first != first {
                try flush()
                first = key.first
            }
            byLength[key.length, default: []].append(Array(term))
        }
        try flush()
    }
}
