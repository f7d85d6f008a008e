import Foundation
import GRDB
import GRDBSQLite

/// Facet columns stored in the index file (schema 21): each attribute's column read once by the writer, so that
/// a reader takes it from one row instead of walking the attribute's value indexes.
///
/// Reading a column from the value indexes costs 0.1–0.2 µs an item (130–180 ms for `country` at 939,632
/// places), and every process that counts a facet pays it, or looks each match up instead (`city`'s 63,684
/// matches: 37–68 ms). The writer stores every attribute's column (`facet_columns`) when an export ends, and
/// while idle once many items changed since; the items whose attributes it writes or removes in between are
/// noted (`facet_column_changes`, in order), and a reader reads their values from `item_attributes` over the
/// stored column. An export's pages drop the columns rather than note every item they write.
extension FacetColumn {
    /// The tables, created by schema 21. A column's `covers` is the last change folded into it, `folds` how many
    /// times changes were folded in since it was read from the value indexes; its body is NULL for an attribute
    /// too large to keep (its facets read the value indexes, as before). Changes are numbered with
    /// AUTOINCREMENT: once the changes a column covers are deleted, a reused number would be taken for one it
    /// covers.
    static let storageSchema = """
        CREATE TABLE facet_columns (name TEXT PRIMARY KEY, covers INTEGER NOT NULL, folds INTEGER NOT NULL, body BLOB);
        CREATE TABLE facet_column_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, item_id INTEGER NOT NULL);
        """

    /// The statements ``readStored(_:maxID:db:)`` runs: the column, the changes after it, each changed item's values.
    static let storedStatements = [
        "SELECT covers, body FROM facet_columns WHERE name = ?",
        "SELECT item_id FROM facet_column_changes WHERE seq > ? LIMIT ?",
        "SELECT kind, number, text FROM item_attributes INDEXED BY item_attributes_by_item WHERE item_id = ? AND name = ?",
    ]

    /// The body's format version (its first byte).
    private static let bodyVersion: UInt8 = 1

    // MARK: Reading

    /// The stored column of attribute `name`, brought to the snapshot read (`maxID`: its largest item id) with
    /// the items changed since it was stored. Nil when none is stored, it was too large to keep, its body is
    /// damaged, or more items changed since than ``mostChanges(maxID:)`` (reading the value indexes costs less).
    /// `matching`: a changed item's values are found among the stored ones (the writer folding changes in, which
    /// would otherwise add the same value again at each fold); a reader appends them, and ``Facet`` adds up
    /// values that read alike.
    static func readStored(_ name: String, maxID: Int64, matching: Bool = false, db: Database) throws -> FacetColumn? {
        guard maxID >= 0, maxID <= mostItemIDs else { return nil }
        let statement = try db.cachedStatement(sql: storedStatements[0])
        try statement.setArguments([name])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        guard try SQLiteCall.step(handle, db: db), sqlite3_column_type(handle, 1) == SQLITE_BLOB else { return nil }
        let covers = sqlite3_column_int64(handle, 0)
        let body = UnsafeRawBufferPointer(start: sqlite3_column_blob(handle, 1), count: Int(sqlite3_column_bytes(handle, 1)))
        guard let decoded = decode(body, count: Int(maxID) + 1) else { return nil }
        guard let changed = try changes(after: covers, atMost: mostChanges(maxID: maxID), db: db) else { return nil }
        return try decoded.applying(changed, name: name, maxID: maxID, matching: matching, db: db)
    }

    /// What reading attribute `name`'s stored column costs, in ids read from the value indexes
    /// (``FilterItemSets/readCost``, 0.1 µs): its bytes decoded, and each item changed since looked up. Nil when
    /// none is stored, it was too large to keep, or too many items changed since.
    static func storedReadCost(_ name: String, maxID: Int64, db: Database) throws -> Int? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT covers, length(body) FROM facet_columns WHERE name = ? AND body IS NOT NULL"),
                                         arguments: [name]),
              let covers = Int64.fromDatabaseValue(row[0]), let bytes = Int.fromDatabaseValue(row[1]) else { return nil }
        let limit = mostChanges(maxID: maxID)
        let changes = try changeCount(after: covers, upTo: limit + 1, db: db)
        guard changes <= limit else { return nil }
        return bytes / bytesPerRead + changes * 10
    }

    /// The changes after change `covers`, counted up to `limit` (a count past it is only known to be past it).
    static func changeCount(after covers: Int64, upTo limit: Int, db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM (SELECT 1 FROM facet_column_changes WHERE seq > ? LIMIT ?)"),
                         arguments: [covers, limit]) ?? 0
    }

    /// Whether any column is stored: changes are noted, and an export's page drops them, only then.
    static func hasStored(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM facet_columns)")) == true
    }

    /// The body's bytes decoded in the time one id is read from the value indexes.
    static let bytesPerRead = 100

    /// The most changed items a reader reads over a stored column: past them, looking each up costs more than
    /// reading the value indexes whole (about 1 µs an item against 0.15).
    static func mostChanges(maxID: Int64) -> Int { Int(maxID / 8) + 64 }

    /// The distinct items changed after change `covers`, sorted; nil when there are more than `limit` changes.
    private static func changes(after covers: Int64, atMost limit: Int, db: Database) throws -> [Int64]? {
        let statement = try db.cachedStatement(sql: storedStatements[1])
        try statement.setArguments([covers, limit + 1])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        var items: [Int64] = []
        while try SQLiteCall.step(handle, db: db) { items.append(sqlite3_column_int64(handle, 0)) }
        guard items.count <= limit else { return nil }
        // An item changed twice is noted twice.
        return Array(Set(items)).sorted()
    }

    /// This column with the values `items` hold now in `item_attributes`: the stored column's for every other item.
    private func applying(_ items: [Int64], name: String, maxID: Int64, matching: Bool, db: Database) throws -> FacetColumn {
        guard !items.isEmpty else { return self }
        var values = values, ordinals = ordinals, more = more
        // Values as the index compares them (texts byte for byte, 0 and -0 as one number): the changed items'
        // values, each once, and when matching the stored ones (a dictionary of every value: a date per item
        // makes it as large as the column, too slow for a reader).
        struct Key: Hashable {
            var kind: Int64, number: UInt64?, text: [UInt8]?
            init(_ value: Value) {
                kind = value.kind
                number = value.number.map { $0 == 0 ? 0 : $0.bitPattern }
                text = value.text.map { Array($0.utf8) }
            }
        }
        var known: [Key: UInt32] = [:]
        if matching { for (offset, value) in values.enumerated() { known[Key(value)] = UInt32(offset + 1) } }
        let statement = try db.cachedStatement(sql: Self.storedStatements[2])
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        for item in items where item >= 0 && item <= maxID {
            let index = Int(item)
            ordinals[index] = 0
            more[item] = nil
            try statement.setArguments([item, name])
            var held: [UInt32] = []
            while try SQLiteCall.step(handle, db: db) {
                // A row of neither (a damaged file's) is no value, as the value indexes' reads skip it.
                if sqlite3_column_type(handle, 1) == SQLITE_NULL && sqlite3_column_type(handle, 2) == SQLITE_NULL { continue }
                let kind = sqlite3_column_int64(handle, 0)
                let text = sqlite3_column_type(handle, 2) == SQLITE_NULL ? nil
                    : String(decoding: UnsafeRawBufferPointer(start: sqlite3_column_text(handle, 2), count: Int(sqlite3_column_bytes(handle, 2))), as: UTF8.self)
                let value = Value(kind: kind, number: text == nil ? SQLiteCall.optionalDouble(handle, 1) : nil, text: text)
                let key = Key(value)
                let ordinal: UInt32
                if let found = known[key] {
                    ordinal = found
                } else {
                    values.append(value)
                    ordinal = UInt32(values.count)
                    known[key] = ordinal
                }
                // A value held twice is one value.
                if !held.contains(ordinal) { held.append(ordinal) }
            }
            sqlite3_reset(handle)
            switch held.count {
            case 0: break
            case 1: ordinals[index] = held[0]
            default:
                ordinals[index] = Self.several
                more[item] = held
            }
        }
        return FacetColumn(values: values, ordinals: ordinals, more: more)
    }

    /// This column without the values no item holds any longer, once they are half of its values: folding
    /// changes in appends each new value (a date updated at every save), and the old ones stay until then.
    func compacted() -> FacetColumn {
        var used = [Bool](repeating: false, count: values.count + 1)
        for ordinal in ordinals where ordinal != Self.several { used[Int(ordinal)] = true }
        for held in more.values { for ordinal in held { used[Int(ordinal)] = true } }
        let unused = used.dropFirst().filter { !$0 }.count
        guard unused > 64, 2 * unused > values.count else { return self }
        var renumbered = [UInt32](repeating: 0, count: values.count + 1), kept: [Value] = []
        for (offset, value) in values.enumerated() where used[offset + 1] {
            kept.append(value)
            renumbered[offset + 1] = UInt32(kept.count)
        }
        return FacetColumn(values: kept, ordinals: ordinals.map { $0 == Self.several ? $0 : renumbered[Int($0)] },
                           more: more.mapValues { $0.map { renumbered[Int($0)] } })
    }

    // MARK: The body

    /// The column as stored: its version byte; its values (each a kind, then a number's bits or a text's
    /// length and bytes); its ordinals, four bytes each, little-endian; and the items holding several values.
    var body: [UInt8] {
        var bytes: [UInt8] = [Self.bodyVersion]
        LEB128.append(UInt64(values.count), to: &bytes)
        for value in values {
            // The kind zigzagged: a damaged index's kinds may be any integer.
            LEB128.append(UInt64(bitPattern: (value.kind << 1) ^ (value.kind >> 63)), to: &bytes)
            if let text = value.text {
                bytes.append(1)
                LEB128.append(UInt64(text.utf8.count), to: &bytes)
                bytes.append(contentsOf: text.utf8)
            } else if let number = value.number {
                bytes.append(2)
                withUnsafeBytes(of: number.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            } else {
                bytes.append(0)
            }
        }
        LEB128.append(UInt64(ordinals.count), to: &bytes)
        bytes.reserveCapacity(bytes.count + 4 * ordinals.count + 16 * more.count)
        for ordinal in ordinals { withUnsafeBytes(of: ordinal.littleEndian) { bytes.append(contentsOf: $0) } }
        LEB128.append(UInt64(more.count), to: &bytes)
        for (item, held) in more.sorted(by: { $0.key < $1.key }) {
            LEB128.append(UInt64(item), to: &bytes)
            LEB128.append(UInt64(held.count), to: &bytes)
            for ordinal in held { LEB128.append(UInt64(ordinal), to: &bytes) }
        }
        return bytes
    }

    /// A column from its stored body, sized for `count` item ids (ids past the stored ones hold nothing; stored
    /// ones past `count` are left out); nil when the body is not one this build wrote whole (a damaged file).
    static func decode(_ body: UnsafeRawBufferPointer, count: Int) -> FacetColumn? {
        guard count >= 0, body.count > 0, body[0] == bodyVersion else { return nil }
        var offset = 1
        func varint(atMost limit: UInt64) -> Int? {
            guard let value = LEB128.read(body, at: &offset), value <= limit else { return nil }
            return Int(value)
        }
        // At most the values a column kept within a reader's budget holds: a hostile count allocates nothing.
        guard let valueCount = varint(atMost: UInt64(8 * FilterItemSets.mostKeptIDs / MemoryLayout<Value>.stride)) else { return nil }
        var values: [Value] = []
        for _ in 0..<valueCount {
            guard let zigzag = LEB128.read(body, at: &offset), offset < body.count else { return nil }
            let kind = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            let tag = body[offset]
            offset += 1
            switch tag {
            case 0:
                values.append(Value(kind: kind, number: nil, text: nil))
            case 1:
                guard let length = varint(atMost: UInt64(body.count)), body.count - offset >= length else { return nil }
                values.append(Value(kind: kind, number: nil, text: String(decoding: body[offset..<(offset + length)], as: UTF8.self)))
                offset += length
            case 2:
                guard body.count - offset >= 8 else { return nil }
                var bits: UInt64 = 0
                for byte in 0..<8 { bits |= UInt64(body[offset + byte]) << (8 * UInt64(byte)) }
                offset += 8
                // The writer keeps finite numbers only: a NaN would reach a date's formatting.
                guard Double(bitPattern: bits).isFinite else { return nil }
                values.append(Value(kind: kind, number: Double(bitPattern: bits), text: nil))
            default:
                return nil
            }
        }
        guard let storedCount = varint(atMost: UInt64(body.count)), body.count - offset >= 4 * storedCount else { return nil }
        var ordinals = [UInt32](repeating: 0, count: count)
        let copied = min(storedCount, count)
        for index in 0..<copied {
            ordinals[index] = UInt32(littleEndian: body.loadUnaligned(fromByteOffset: offset + 4 * index, as: UInt32.self))
        }
        // Every ordinal names a stored value, or several: a damaged one would count past the values.
        let last = UInt32(values.count)
        guard ordinals.allSatisfy({ $0 <= last || $0 == several }) else { return nil }
        offset += 4 * storedCount
        guard let moreCount = varint(atMost: UInt64(body.count - offset)) else { return nil }
        var more: [Int64: [UInt32]] = [:]
        for _ in 0..<moreCount {
            guard let item = varint(atMost: UInt64(Int64.max)), let heldCount = varint(atMost: UInt64(body.count - offset)) else { return nil }
            var held: [UInt32] = []
            for _ in 0..<heldCount {
                guard let ordinal = varint(atMost: UInt64(last)), ordinal > 0, !held.contains(UInt32(ordinal)) else { return nil }
                held.append(UInt32(ordinal))
            }
            // As the writer keeps them: two values or more, each once, of an item marked as holding several.
            guard held.count >= 2, more[Int64(item)] == nil, item >= count || ordinals[item] == several else { return nil }
            if item < count { more[Int64(item)] = held }
        }
        guard offset == body.count else { return nil }
        // An item marked as holding several has them listed.
        guard ordinals.indices.allSatisfy({ ordinals[$0] != several || more[Int64($0)] != nil }) else { return nil }
        return FacetColumn(values: values, ordinals: ordinals, more: more)
    }

    // MARK: Writing

    /// Notes, for the stored columns, that an item's attributes were written or removed: nil when none is stored
    /// (an export's pages, an index before its first export ends).
    static func changeNote(_ db: Database) throws -> Statement? {
        guard try hasStored(db) else { return nil }
        return try db.cachedStatement(sql: "INSERT INTO facet_column_changes (item_id) VALUES (?)")
    }

    /// Drops every stored column and change: an export's page rewrites the items of its store.
    static func dropStored(_ db: Database) throws {
        guard try hasStored(db) else { return }
        try db.execute(sql: "DELETE FROM facet_columns; DELETE FROM facet_column_changes")
    }

    /// The attributes the index holds values of, in order: one seek each.
    static func attributeNames(_ db: Database) throws -> [String] {
        var names: [String] = []
        let first = try db.cachedStatement(sql: "SELECT min(name) FROM item_attributes")
        let next = try db.cachedStatement(sql: "SELECT min(name) FROM item_attributes WHERE name > ?")
        var name = try String.fetchOne(first)
        while let found = name {
            names.append(found)
            name = try String.fetchOne(next, arguments: [found])
        }
        return names
    }

    /// The attributes whose column is due to be stored: none stored yet, or more changes after it than a reader
    /// should read over it (``storingThreshold(maxID:)``).
    static func dueColumns(_ db: Database) throws -> [String] {
        guard let maxID = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM items")), maxID <= mostItemIDs else { return [] }
        let stored = try Row.fetchAll(db.cachedStatement(sql: "SELECT name, covers FROM facet_columns"))
        var covers: [String: Int64] = [:]
        for row in stored { if let name = String.fromDatabaseValue(row[0]) { covers[name] = Int64.fromDatabaseValue(row[1]) ?? 0 } }
        let threshold = storingThreshold(maxID: maxID)
        func changes(after covered: Int64) throws -> Int { try changeCount(after: covered, upTo: threshold + 1, db: db) }
        // A follower asks after each catch-up: one count, after the oldest column, answers for every stored one.
        let manyChanges = try covers.values.min().map { try changes(after: $0) > threshold } ?? false
        let names = try attributeNames(db)
        // A column of an attribute no item holds any longer is due too: storing drops it, else its old `covers`
        // would keep every later change.
        let gone = Set(covers.keys).subtracting(names).sorted()
        return try gone + names.filter { name in
            guard let covered = covers[name] else { return true }
            return try manyChanges && changes(after: covered) > threshold
        }
    }

    /// The changes after a stored column past which the writer stores it again while idle: about 1 µs each for
    /// every reader of the column, against 0.15 µs an item to store it (0.15 s for 939,632 places).
    static func storingThreshold(maxID: Int64) -> Int { max(1_024, Int(maxID / 256)) }

    /// Stores the columns of `names` (every attribute when nil) as the index is now, folding in every change noted
    /// so far, until `stops` says so before one; drops the columns of attributes no item holds, and forgets the
    /// changes every stored column covers. Returns how many it stored or dropped.
    @discardableResult
    static func store(_ names: [String]?, db: Database, stops: () -> Bool = { false }) throws -> Int {
        // No items, or more than a column is read for: no column, and so no change noted.
        guard let maxID = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM items")), maxID <= mostItemIDs else {
            try db.execute(sql: "DELETE FROM facet_columns; DELETE FROM facet_column_changes")
            return 0
        }
        let covers = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(seq) FROM facet_column_changes")) ?? 0
        let present = try attributeNames(db)
        let presentSet = Set(present)
        var stored = 0
        for gone in try String.fetchAll(db, sql: "SELECT name FROM facet_columns") where !presentSet.contains(gone) {
            try db.execute(sql: "DELETE FROM facet_columns WHERE name = ?", arguments: [gone])
            stored += 1
        }
        let folds = try db.cachedStatement(sql: "SELECT folds FROM facet_columns WHERE name = ?")
        let save = try db.cachedStatement(sql: "INSERT OR REPLACE INTO facet_columns (name, covers, folds, body) VALUES (?, ?, ?, ?)")
        let handle = save.sqliteStatement
        // The last body stays bound to the cached statement otherwise (megabytes).
        defer { sqlite3_clear_bindings(handle) }
        // Through the page cache: the value indexes' pages, mapped, would stay in the writer's resident memory
        // (a first export of the full Corpus peaked at 405 MiB instead of 184).
        try TermLeaders.withoutMemoryMap(db) {
            for name in (names ?? present) where presentSet.contains(name) {
                if stored > 0 && stops() { break }
                // While idle, the stored column with the changes since folded in, as a reader reads it: a few
                // milliseconds where reading the value indexes took 7 (34,258 items) to 150 (939,632), which a
                // save arriving meanwhile waited for (storm p99 95 → 112–130 ms). Read whole from the value
                // indexes otherwise, when it cannot be read, and every ``mostFolds`` folds (what a fold would
                // carry on from a damaged column or a change not noted does not last).
                let folded = try names == nil ? 0 : (Int.fetchOne(folds, arguments: [name]) ?? mostFolds)
                let column: FacetColumn?, foldsNow: Int
                if folded < mostFolds, let fold = try readStored(name, maxID: maxID, matching: true, db: db) {
                    (column, foldsNow) = (fold.compacted(), folded + 1)
                } else {
                    (column, foldsNow) = (try read(name, maxID: maxID, db: db), 0)
                }
                sqlite3_reset(handle)
                SQLiteCall.bindText(handle, 1, name)
                sqlite3_bind_int64(handle, 2, covers)
                sqlite3_bind_int64(handle, 3, Int64(foldsNow))
                // Too large to keep in a reader's budget: stored as such, so that it is not read again each time.
                if let column, column.keptSize <= FilterItemSets.mostKeptIDs { SQLiteCall.bindBlob(handle, 4, column.body) } else { sqlite3_bind_null(handle, 4) }
                _ = try SQLiteCall.step(handle, db: db)
                stored += 1
            }
        }
        try db.execute(sql: "DELETE FROM facet_column_changes WHERE seq <= (SELECT coalesce(min(covers), 0) FROM facet_columns)")
        return stored
    }

    /// The folds after which a column is read whole from the value indexes again.
    static let mostFolds = 16

    /// Stores the first column due (``dueColumns(_:)``), or drops a gone one; returns how many it stored or dropped.
    ///
    /// One a turn: a follower under a stream of saves is idle a few milliseconds at a time, and a save arriving
    /// meanwhile waits for what it does. Folding all five of the small Corpus's columns at once (10–35 ms every
    /// 1,024 changes) took the storm's p99 from 90 to 108–161 ms.
    static func storeDue(_ db: Database) throws -> Int {
        let due = try dueColumns(db)
        guard !due.isEmpty else { return 0 }
        return try store(due, db: db) { true }
    }
}
