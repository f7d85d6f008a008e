import Foundation
import GRDB
import GRDBSQLite

/// Placed lists: beside its leader list, each listed word, prefix or phrase keeps its best rows far deeper
/// (every row of most words), each with its place and its score then, best first, so that a search of it alone
/// within a region walks them in score order and stops once nothing further down can reach its page.
///
/// A wide circle holds thousands of a frequent word's rows: scoring them all (FTS5's doclist walked, or the
/// R-tree's places checked one by one) took 15–60 ms at 939,632 items for `new`, `santa` or `Su*` within
/// 1,000 km, where the region's best 20 are among the word's best few hundred rows that lie in it. A region
/// holding few of them costs a walk of the list (a few bytes a row, no item read) and the rows inside it.
///
/// A placed list is true exactly when its leader list is (``leader_terms``'s `stale`): both are listed in one
/// pass, dropped together, and a write marks them stale together.
extension TermLeaders {
    /// The table, created by schema 15 (and by the schemas that list before it, 9 and 13, for a file
    /// migrated from before them), with ``placedTailsSchema`` beside it. A list is stored in chunks, so that a walk that stops early reads only
    /// the first: a word's whole list read as one value (up to 1.3 MB) took 1.0 ms of a 1.1 ms search.
    static let placesSchema = """
        CREATE TABLE IF NOT EXISTS leader_places (
            term TEXT NOT NULL,
            chunk INTEGER NOT NULL,       -- 0, 1, …: the entries in order (chunk 0 exists for every placed list, maybe empty)
            threshold REAL,               -- on chunk 0: the best score of a placed row left off, then; NULL when every placed row is listed
            count INTEGER,                -- on chunk 0: the entries of all chunks (a chunk lost at the end would go unseen otherwise)
            entries BLOB NOT NULL,        -- up to placedChunkEntries PlacedEntry records, best score first
            PRIMARY KEY (term, chunk)
        ) WITHOUT ROWID;
        """

    /// The entries a chunk holds (5 KB).
    static let placedChunkEntries = 256

    /// The placed rows a word's or a phrase's list keeps: all of them for all but the most frequent words (the
    /// words of time zones, `europe`), whose rows are everywhere a region holds their best.
    static let placedWordRows = 65_536
    /// The placed rows a prefix's list keeps: prefixes are many and cover most rows several times over
    /// (every row of the 1,730 prefixes listed at 939,632 items would be 22.7 million entries). 16,384 keeps
    /// every row of 1,481 of them (10 million entries, 200 MB), so that a region holding few of a prefix's rows
    /// is answered from its list too: with 1,024, `Re*` (14,096 rows) within 1,000 km of Mexico City found too
    /// few there and merged the prefix's doclist (17.5 ms; now 0.10).
    static let placedPrefixRows = 16_384
    /// The deepest page a placed list answers: a deeper one needs more of the region's rows than a list
    /// usually holds.
    static let maximumPlacedPage = 256

    /// One placed row as stored: its item's id, its place rounded to `Float` (a search checks the region
    /// with a margin, then exactly from the item), and its score then rounded up (a bound on it).
    struct PlacedEntry {
        /// Bytes per entry: the id, the latitude, the longitude and the score.
        static let size = 8 + 4 + 4 + 4

        var id: Int64
        var latitude: Float, longitude: Float
        var score: Float

        /// The score as a `Float` no smaller than `score`.
        static func bound(_ score: Double) -> Float {
            let rounded = Float(score)
            return Double(rounded) < score ? rounded.nextUp : rounded
        }

        /// The entry at `index` of a list's bytes (which hold at least `index + 1` entries).
        static func read(_ bytes: UnsafeRawBufferPointer, at index: Int) -> PlacedEntry {
            let offset = index * size
            return PlacedEntry(id: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)),
                               latitude: Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))),
                               longitude: Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))),
                               score: Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt32.self))))
        }

        /// Writes the entry's bytes as the entry at `index` of `bytes` (which has room for it).
        func write(to bytes: UnsafeMutableRawBufferPointer, at index: Int) {
            let offset = index * Self.size
            bytes.storeBytes(of: id.littleEndian, toByteOffset: offset, as: Int64.self)
            bytes.storeBytes(of: latitude.bitPattern.littleEndian, toByteOffset: offset + 8, as: UInt32.self)
            bytes.storeBytes(of: longitude.bitPattern.littleEndian, toByteOffset: offset + 12, as: UInt32.self)
            bytes.storeBytes(of: score.bitPattern.littleEndian, toByteOffset: offset + 16, as: UInt32.self)
        }
    }

    /// A listing's placed rows as they are scored, kept to the best `depth` with the best score of those
    /// left off, in bounded memory: ties with the row left off first are left off with it (no URI tells
    /// them apart here), so every kept row scores above the threshold.
    struct PlacedRows {
        let depth: Int
        private(set) var rows: [(score: Double, id: Int64, latitude: Double, longitude: Double)] = []
        /// The best score of a placed row left off so far (or a bound on it).
        private(set) var threshold: Double?

        init(depth: Int) { self.depth = depth }

        /// A scored row with a place.
        mutating func add(score: Double, id: Int64, latitude: Double, longitude: Double) {
            if let threshold, score <= threshold { return }
            rows.append((score, id, latitude, longitude))
            if rows.count >= 2 * depth + 1024 { cut() }
        }

        /// A row the ranking pruned (its bound, never below its score) or could not score: left off.
        mutating func leaveOff(bound: Double) {
            threshold = Swift.max(threshold ?? -.infinity, bound)
        }

        /// Keeps the rows scoring above the `depth + 1`-th best and every row left off, best first.
        mutating func cut() {
            rows.sort { $0.score > $1.score }
            if rows.count > depth { threshold = Swift.max(threshold ?? -.infinity, rows[depth].score) }
            if let threshold { rows.removeAll { $0.score <= threshold } }
        }

        /// The kept rows' bytes, best first, in chunks of ``placedChunkEntries`` (one, maybe empty, at least).
        mutating func chunks() -> [Data] {
            cut()
            return stride(from: 0, to: Swift.max(rows.count, 1), by: placedChunkEntries).map { start in
                let slice = rows[start..<Swift.min(rows.count, start + placedChunkEntries)]
                // Written in place: appending each field to a `Data` was most of the encoding.
                var data = Data(count: slice.count * PlacedEntry.size)
                data.withUnsafeMutableBytes { bytes in
                    for (index, row) in slice.enumerated() {
                        PlacedEntry(id: row.id, latitude: Float(row.latitude), longitude: Float(row.longitude), score: PlacedEntry.bound(row.score))
                            .write(to: bytes, at: index)
                    }
                }
                return data
            }
        }
    }

    /// A placed list's header read for a search: how high a row's score can be now given its score then
    /// (``Drift``, as for the leader list beside it; its threshold is the best score of a placed row left
    /// off, nil when every placed row is listed).
    struct PlacedListing {
        let key: String
        let drift: Drift
        /// The entries of all chunks.
        let count: Int64
        /// The entries of its tail (``TermLeaders/PlacedTail``): nil when it has none.
        let tail: Int64?

        /// Whether the list, with its tail, holds every placed row of its key.
        var isComplete: Bool { drift.threshold == nil || tail != nil }
        /// The entries of the list and its tail (counts a damaged index may hold past any file's size saturate).
        var entries: Int64 {
            let (sum, overflow) = count.addingReportingOverflow(tail ?? 0)
            return overflow ? .max : sum
        }

        /// Whether a row scoring `score` now comes before every row whose listed score was at most `listed`.
        func precedes(_ score: Double, rowsListedAtMost listed: Double) -> Bool { TermLeaders.exceeds(score, drift.bound(listed)) }

        /// Hands the entries to `visit`, best first, chunk by chunk as it asks for more, until it answers;
        /// returns its answer, nil past the last entry, or false when the list is damaged (a chunk missing or
        /// of a size no entries make, scores out of order: a walk stopped early by them could miss a row).
        func walk(db: Database, _ visit: (PlacedEntry) throws -> Bool?) throws -> Bool? {
            let statement = try db.cachedStatement(sql: "SELECT chunk, entries FROM leader_places WHERE term = ? ORDER BY chunk")
            statement.setUncheckedArguments([key])
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }
            var expected: Int64 = 0, entries: Int64 = 0, previous = Float.infinity
            while try SQLiteCall.step(handle, db: db) {
                let bytes = Int(sqlite3_column_bytes(handle, 1))
                guard sqlite3_column_int64(handle, 0) == expected, bytes % PlacedEntry.size == 0 else { return false }
                expected += 1
                entries += Int64(bytes / PlacedEntry.size)
                guard bytes > 0, let blob = sqlite3_column_blob(handle, 1) else { continue }
                // Read in place: the chunk stays valid until the statement steps again.
                let chunk = UnsafeRawBufferPointer(start: blob, count: bytes)
                for index in 0..<(bytes / PlacedEntry.size) {
                    let entry = PlacedEntry.read(chunk, at: index)
                    guard entry.score <= previous else { return false }
                    previous = entry.score
                    if let answer = try visit(entry) { return answer }
                }
            }
            return expected > 0 && entries == count ? nil : false
        }
    }

    /// The placed list of a key whose lists are not stale, or nil (none, stale, listed by a build without
    /// placed lists, or damaged).
    static func placedListing(key: String, db: Database) throws -> PlacedListing? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT t.documents, t.rows, t.name_average, t.title_average, p.threshold, p.count, x.count
            FROM leader_terms t JOIN leader_places p ON p.term = t.term AND p.chunk = 0 LEFT JOIN leader_place_tails x ON x.term = t.term
            WHERE t.term = ? AND t.stale = 0
            """), arguments: [key]),
              let drift = try Drift(row, db: db) else { return nil }
        let count = try row.integer(5), tail: Int64? = try row.optionalInteger(6)
        guard count >= 0, tail.map({ $0 >= 0 }) != false else { return nil }
        return PlacedListing(key: key, drift: drift, count: count, tail: tail)
    }

    /// Stores a key's placed rows (its leader list's row is written beside, in the same transaction).
    static func savePlaces(_ made: MadeList, db: Database) throws {
        let insert = try db.cachedStatement(sql: "INSERT INTO leader_places (term, chunk, threshold, count, entries) VALUES (?, ?, ?, ?, ?)")
        let count = made.placedChunks.reduce(0) { $0 + $1.count } / PlacedEntry.size
        for (chunk, entries) in made.placedChunks.enumerated() {
            try insert.execute(arguments: chunk == 0 ? [made.key, chunk, made.placedThreshold, count, entries] : [made.key, chunk, nil, nil, entries])
        }
    }

    /// Lists every listed key again with its placed rows (schema 15: lists listed before have none).
    static func listPlaces(_ db: Database) throws {
        try saveTouched(db)
        _ = try relist(String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE stale = 0 ORDER BY term"), db: db)
    }
}
