import Foundation
import GRDB
import GRDBSQLite

/// Placed tails: the rows a placed list leaves off, kept without scores, so that the list with its tail holds
/// every placed row of its key.
///
/// A placed list keeps its key's best rows (16,384 for a prefix), so a dense region holding few of its rows
/// often finds too few of them above the list's threshold: `Sha*` (72,460 rows) within 100 km of Lausanne
/// scored the circle's 5,570 places one by one (5.5 ms at 939,632 items), `Co*` within 200 km in Ukraine
/// (4 hits of 36,776 rows) 9 ms. With the tail, a walk past the list's end reads the few rows the tail has in
/// the region, and the page is exact. An entry is the item's id (a varint of its gap from the one before, ids
/// ascending) and its place rounded to 16 bits a coordinate (≈ 300 m), 5–7 bytes: the tails of the 226 keys
/// with one at 939,632 items add about 28 MB. A key with more rows than ``PlacedDepths/mostTailRows`` keeps
/// none (its rows are everywhere, and a region holding few of them is rare).
extension TermLeaders {
    /// The table, created by schema 18 (and by the schemas that list before it, 9, 13 and 15, for a file
    /// migrated from before them). One row a key: a tail is read whole by the walk that needs it.
    static let placedTailsSchema = """
        CREATE TABLE IF NOT EXISTS leader_place_tails (
            term TEXT NOT NULL PRIMARY KEY,
            count INTEGER NOT NULL,       -- the entries
            entries BLOB NOT NULL         -- PlacedTail entries, ids ascending
        ) WITHOUT ROWID;
        """

    /// How deep a listing keeps its placed rows, and which keys keep the rest in a tail.
    struct PlacedDepths {
        /// The placed rows a word's or a phrase's list keeps, best first.
        var word: Int
        /// The placed rows a prefix's list keeps, best first.
        var prefix: Int
        /// The most placed rows of a key whose list keeps a tail.
        var mostTailRows: Int

        /// The depths an index lists with (tests list shallower, to have tails at a few thousand items).
        static let standard = PlacedDepths(word: placedWordRows, prefix: placedPrefixRows, mostTailRows: 131_072)

        /// The placed rows the list of a key keeps.
        func rows(isPrefix: Bool) -> Int { isPrefix ? prefix : word }
    }

    /// A tail's encoding: each entry the gap from the previous id (the first from 0) as an unsigned LEB128
    /// varint, then the latitude and the longitude as little-endian `Int16`s scaled to ±32,767.
    enum PlacedTail {
        /// How far a decoded place may lie from the item's: half a step of the rounding, in degrees.
        static let latitudeError = 90.0 / 32_767 / 2, longitudeError = 180.0 / 32_767 / 2

        /// The bytes of rows `(id, latitude, longitude)`, which it sorts by id.
        static func encode(_ rows: inout [(id: Int64, latitude: Double, longitude: Double)]) -> Data {
            rows.sort { $0.id < $1.id }
            var data = Data(capacity: rows.count * 6)
            var previous: Int64 = 0
            for row in rows {
                LEB128.append(UInt64(bitPattern: row.id &- previous), to: &data)
                previous = row.id
                withUnsafeBytes(of: quantize(row.latitude, 90).littleEndian) { data.append(contentsOf: $0) }
                withUnsafeBytes(of: quantize(row.longitude, 180).littleEndian) { data.append(contentsOf: $0) }
            }
            return data
        }

        private static func quantize(_ degrees: Double, _ extent: Double) -> Int16 {
            Int16((Swift.min(Swift.max(degrees / extent, -1), 1) * 32_767).rounded())
        }

        /// Hands the entries of `bytes` to `visit` (id, latitude, longitude, as decoded) while it returns true:
        /// true past the last, nil when `visit` stopped, false when the bytes are damaged (a varint running past
        /// the end or past 64 bits, a place cut short or off the scale, ids not ascending, or not `count` entries).
        static func scan(_ bytes: UnsafeRawBufferPointer, count: Int64, _ visit: (Int64, Double, Double) throws -> Bool) rethrows -> Bool? {
            var offset = 0, id: Int64 = 0, entries: Int64 = 0
            while offset < bytes.count {
                // Ascending ids: every gap but the first (from 0) is positive.
                guard let gap = LEB128.read(bytes, at: &offset), gap > 0 || entries == 0, offset + 4 <= bytes.count else { return false }
                let (next, overflow) = id.addingReportingOverflow(Int64(bitPattern: gap))
                guard !overflow, next >= id else { return false }
                id = next
                let latitude = Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self))
                let longitude = Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 2, as: Int16.self))
                // Never written: the scale stops at ±32,767 (±90°, ±180°).
                guard latitude != .min, longitude != .min else { return false }
                offset += 4
                entries += 1
                guard try visit(id, Double(latitude) * 90 / 32_767, Double(longitude) * 180 / 32_767) else { return nil }
            }
            return entries == count
        }
    }

    /// A key's tail: its placed rows `everywhere` that `placed` leaves off, encoded; nil when it leaves none
    /// off, or when `everywhere` is nil (too many rows to keep).
    static func tail(of placed: PlacedRows, everywhere: [(id: Int64, latitude: Double, longitude: Double)]?) -> MadeList.Tail? {
        guard placed.threshold != nil, let everywhere else { return nil }
        let listed = Set(placed.rows.map(\.id))
        var tail = everywhere.filter { !listed.contains($0.id) }
        return MadeList.Tail(count: tail.count, entries: PlacedTail.encode(&tail))
    }
}

extension TermLeaders {
    /// Lists again every list that leaves placed rows off and may keep a tail (schema 18: lists listed
    /// before have none).
    static func listTails(_ db: Database) throws {
        try saveTouched(db)
        _ = try relist(String.fetchAll(db, sql: """
            SELECT t.term FROM leader_terms t JOIN leader_places p ON p.term = t.term AND p.chunk = 0
            WHERE t.stale = 0 AND p.threshold IS NOT NULL AND t.documents <= ?
                AND NOT EXISTS (SELECT 1 FROM leader_place_tails x WHERE x.term = t.term)
            ORDER BY t.term
            """, arguments: [PlacedDepths.standard.mostTailRows]), db: db)
    }
}

extension TermLeaders.PlacedListing {
    /// Hands the entries of the list's tail to `visit` (id, latitude, longitude, rounded: see
    /// ``TermLeaders/PlacedTail``) while it returns true: a walk giving up stops decoding (a tail holds up to
    /// 131,072 entries). True past the last entry, nil when `visit` stopped, false when there is no tail or it
    /// is damaged.
    func walkTail(db: Database, _ visit: (Int64, Double, Double) throws -> Bool) throws -> Bool? {
        guard let tail else { return false }
        let statement = try db.cachedStatement(sql: "SELECT entries FROM leader_place_tails WHERE term = ?")
        statement.setUncheckedArguments([key])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        guard try SQLiteCall.step(handle, db: db) else { return false }
        let bytes = Int(sqlite3_column_bytes(handle, 0))
        guard bytes > 0, let blob = sqlite3_column_blob(handle, 0) else { return tail == 0 }
        // Read in place: the value stays valid until the statement is reset.
        return try TermLeaders.PlacedTail.scan(UnsafeRawBufferPointer(start: blob, count: bytes), count: tail, visit)
    }
}
