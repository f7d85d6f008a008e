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
    /// migrated from before them).
    static let placesSchema = """
        CREATE TABLE IF NOT EXISTS leader_places (
            term TEXT PRIMARY KEY,
            threshold REAL,               -- the best score of a placed row left off, then; NULL when every placed row is listed
            entries BLOB NOT NULL         -- PlacedEntry records, best score first
        ) WITHOUT ROWID;
        """

    /// The placed rows a word's or a phrase's list keeps: all of them for all but the most frequent words (the
    /// words of time zones, `europe`), whose rows are everywhere a region holds their best.
    static let placedWordRows = 65_536
    /// The placed rows a prefix's list keeps: prefixes are many and cover most rows several times over
    /// (every row of the 1,730 prefixes listed at 939,632 items would be 22.7 million entries).
    static let placedPrefixRows = 1_024
    /// The deepest page a placed list answers: a deeper one needs more of the region's rows than a list
    /// usually holds.
    static let maximumPlacedPage = 256

    /// The placed rows the list of a key keeps.
    static func placedRows(isPrefix: Bool) -> Int { isPrefix ? placedPrefixRows : placedWordRows }

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

        /// Appends the entry's bytes.
        func write(to data: inout Data) {
            withUnsafeBytes(of: id.littleEndian) { data.append(contentsOf: $0) }
            for value in [latitude, longitude, score] { withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
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

        /// The kept rows' bytes, best first.
        mutating func entries() -> Data {
            cut()
            var data = Data(capacity: rows.count * PlacedEntry.size)
            for row in rows {
                PlacedEntry(id: row.id, latitude: Float(row.latitude), longitude: Float(row.longitude), score: PlacedEntry.bound(row.score)).write(to: &data)
            }
            return data
        }
    }

    /// A placed list read for a search: its entries, and how high a row's score can be now given its score
    /// then (``Drift``, as for the leader list beside it).
    struct PlacedListing {
        /// The entries' bytes, best first.
        var entries: Data
        /// Its threshold is the best score of a placed row left off, when listed (nil: every placed row is listed).
        var drift: Drift

        var count: Int { entries.count / PlacedEntry.size }

        /// Whether a row scoring `score` now comes before every row whose listed score was at most `listed`.
        func precedes(_ score: Double, rowsListedAtMost listed: Double) -> Bool { TermLeaders.exceeds(score, drift.bound(listed)) }
    }

    /// The placed list of a key whose lists are not stale, or nil (none, stale, listed by a build without
    /// placed lists, or damaged).
    static func placedListing(key: String, db: Database) throws -> PlacedListing? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT t.documents, t.rows, t.name_average, t.title_average, p.threshold, p.entries
            FROM leader_terms t JOIN leader_places p ON p.term = t.term WHERE t.term = ? AND t.stale = 0
            """), arguments: [key]),
              let drift = try Drift(row, db: db),
              let entries = row[5] as Data?, entries.count % PlacedEntry.size == 0 else { return nil }
        return PlacedListing(entries: entries, drift: drift)
    }

    /// Stores a key's placed rows (its leader list's row is written beside, in the same transaction).
    static func savePlaces(_ placed: inout PlacedRows, key: String, db: Database) throws {
        let entries = placed.entries()
        try db.cachedStatement(sql: "INSERT INTO leader_places (term, threshold, entries) VALUES (?, ?, ?)")
            .execute(arguments: [key, placed.threshold, entries])
    }

    /// Lists every listed key again with its placed rows (schema 15: lists listed before have none).
    static func listPlaces(_ db: Database) throws {
        try saveTouched(db)
        _ = try relist(String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE stale = 0 ORDER BY term"), db: db)
    }
}
