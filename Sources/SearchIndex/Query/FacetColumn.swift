import GRDB
import GRDBSQLite

/// The values of one filter attribute, item by item, read once from the attribute indexes: a facet over many
/// matches counts them here instead of looking each match up in `item_attributes_by_item`.
///
/// Looking a match up costs 0.5–0.9 µs (`city`'s 63,684 matches: 37 ms at 939,632 places, where walking its
/// doclist takes 4); reading the column costs 0.1–0.2 µs an item, once. A connection reads it once its
/// facets' lookups would have paid for the read (``FilterItemSets``), and keeps it for the snapshot it read.
struct FacetColumn: Sendable {
    /// One value as the index stores it: `kind` 0 text, 1 number, 2 date (seconds since 2001).
    struct Value: Sendable, Hashable {
        var kind: Int64
        var number: Double?
        var text: String?

        /// Whether the index holds the same value: texts compared byte for byte, as its `GROUP BY` does (Swift's
        /// `==` calls NFC `é` and NFD `e` + U+0301 equal).
        func isStored(as other: Value) -> Bool {
            guard kind == other.kind, number == other.number else { return false }
            switch (text, other.text) {
            case (nil, nil): return true
            case let (a?, b?): return a.utf8.elementsEqual(b.utf8)
            default: return false
            }
        }
    }

    /// The values: distinct and in index order (numbers, then text) when read from the value indexes; a stored
    /// column read with the items changed since may hold one twice (``Facet`` adds up values that read alike).
    let values: [Value]
    /// For each item id, 1 + its value's position in `values`; 0 for none; ``several`` for an item holding
    /// more than one, whose values are in `more`.
    let ordinals: [UInt32]
    /// The values of the items holding more than one, each once.
    let more: [Int64: [UInt32]]

    /// The marker of an item holding several values.
    static let several = UInt32.max

    /// The largest item id a column is read for: its array (4 bytes an id) stays within the kept items' budget.
    static let mostItemIDs = Int64(2 * FilterItemSets.mostKeptIDs)

    /// What the column takes of ``FilterItemSets``' budget, in ids (8 bytes each): its array, the values (an
    /// attribute with a value per item, a postcode, holds more in them than in the array) and the items holding
    /// several, each with a dictionary slot and an array of its own.
    let keptSize: Int

    /// The statements ``read(_:maxID:db:)`` runs, each with the attribute's name: every value kept by the writer
    /// is a number (or date) or a text, never neither.
    static let statements = [
        "SELECT item_id, kind, number, NULL FROM item_attributes INDEXED BY item_attributes_by_number WHERE name = ? AND number IS NOT NULL ORDER BY number, kind, item_id",
        "SELECT item_id, kind, NULL, text FROM item_attributes INDEXED BY item_attributes_by_text WHERE name = ? AND text IS NOT NULL ORDER BY text, kind, item_id",
    ]

    /// Reads the column of attribute `name`: each item's numbers and dates (in `(name, number, kind, item_id)`
    /// order), then its texts, from the covering value indexes. Nil when the items' ids reach past
    /// ``mostItemIDs`` (the column would be too large to keep).
    /// `maxID`: the largest item id of the snapshot read.
    static func read(_ name: String, maxID: Int64, db: Database) throws -> FacetColumn? {
        guard maxID >= 0, maxID <= mostItemIDs else { return nil }
        var ordinals = [UInt32](repeating: 0, count: Int(maxID) + 1)
        var values: [Value] = [], more: [Int64: [UInt32]] = [:]
        for (sql, textual) in zip(statements, [false, true]) {
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments([name])
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }  // a statement left stepping would hold its snapshot open
            // Rows come value by value, each value's items in id order: a new value starts where one differs
            // (compared as stored, without making a string of each row's), and an item holding a value twice
            // comes twice in a row.
            var last: (kind: Int64, number: Double, text: [UInt8], item: Int64)?
            while try SQLiteCall.step(handle, db: db) {
                let item = sqlite3_column_int64(handle, 0), kind = sqlite3_column_int64(handle, 1)
                let number = textual ? 0 : sqlite3_column_double(handle, 2)
                let bytes = textual ? UnsafeRawBufferPointer(start: sqlite3_column_text(handle, 3), count: Int(sqlite3_column_bytes(handle, 3)))
                                    : UnsafeRawBufferPointer(start: nil, count: 0)
                if let previous = last, previous.kind == kind, previous.number == number, previous.text.elementsEqual(bytes) {
                    if previous.item == item { continue }
                    last?.item = item
                } else {
                    values.append(Value(kind: kind, number: textual ? nil : number, text: textual ? String(decoding: bytes, as: UTF8.self) : nil))
                    last = (kind, number, Array(bytes), item)
                }
                // Rows of items past the snapshot's last id belong to no item a search can match.
                guard item >= 0, item <= maxID else { continue }
                let ordinal = UInt32(values.count), index = Int(item)
                switch ordinals[index] {
                case 0: ordinals[index] = ordinal
                case Self.several: more[item, default: []].append(ordinal)
                case let first:
                    more[item] = [first, ordinal]
                    ordinals[index] = several
                }
            }
        }
        return FacetColumn(values: values, ordinals: ordinals, more: more)
    }

    init(values: [Value], ordinals: [UInt32], more: [Int64: [UInt32]]) {
        self.values = values
        self.ordinals = ordinals
        self.more = more
        let bytes = 4 * ordinals.count + values.reduce(0) { $0 + MemoryLayout<Value>.stride + ($1.text?.utf8.count ?? 0) }
            + more.values.reduce(0) { $0 + 64 + 4 * $1.count }
        keptSize = (bytes + 7) / 8
    }

    /// Counts of items per value, to be added to with ``count(_:into:)``: an array when the values are few, a
    /// dictionary when they are many (a search of three matches should not allocate and read an array of every
    /// postcode).
    struct Counts {
        fileprivate var dense: [Int]
        fileprivate var sparse: [UInt32: Int] = [:]
    }

    /// The most values counted in an array (64 KB of counts).
    private static let mostDenseValues = 8_192

    /// Counts of no item yet.
    func emptyCounts() -> Counts {
        Counts(dense: values.count <= Self.mostDenseValues ? [Int](repeating: 0, count: values.count + 1) : [])
    }

    /// Counts the values of item `id` (each value once) into `counts`.
    func count(_ id: Int64, into counts: inout Counts) {
        guard id >= 0, id < Int64(ordinals.count) else { return }
        let ordinal = ordinals[Int(id)]
        if ordinal == Self.several {
            for value in more[id] ?? [] { add(value, to: &counts) }
        } else if ordinal != 0 {  // 0: none
            add(ordinal, to: &counts)
        }
    }

    private func add(_ ordinal: UInt32, to counts: inout Counts) {
        if counts.dense.isEmpty { counts.sparse[ordinal, default: 0] += 1 } else { counts.dense[Int(ordinal)] += 1 }
    }

    /// The facet's groups from counts made by ``count(_:into:)``, to be added to groups counted otherwise.
    func groups(_ counts: Counts) -> [(kind: Int, number: Double?, text: String?, items: Int)] {
        let counted: [(ordinal: Int, items: Int)] = counts.dense.isEmpty
            ? counts.sparse.map { (Int($0.key), $0.value) }
            : counts.dense.indices.dropFirst().compactMap { counts.dense[$0] > 0 ? ($0, counts.dense[$0]) : nil }
        return counted.map { ordinal, items in
            let value = values[ordinal - 1]
            return (kind: Int(value.kind), number: value.number, text: value.text, items: items)
        }
    }
}
