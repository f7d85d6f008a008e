import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// Filter attributes: candidates a predicate keeps, orders by an attribute, facets.
extension Search {
    /// A search by attributes alone: every item the filter keeps, most important (static rank) first.
    mutating func filtered() throws -> [Candidate] {
        let filter = itemFilter(probing: false)
        let sql = "SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, i.rank FROM items i WHERE 1\(filter.sql)"
        record(sql, filter.arguments)
        return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: filter.arguments).map { row in
            Candidate(id: try row.integer(0), uri: try row.text(1), entity: try row.text(2), displayName: try row.text(3),
                      latitude: try row.optionalNumber(4), longitude: try row.optionalNumber(5), score: try row.number(6))
        }
    }

    // MARK: Attributes

    /// Each candidate's values of an attribute, 500 ids per query: the lowest and highest number, and
    /// the lowest and highest text.
    mutating func attributeValues(_ name: String, ids: [Int64]) throws -> [Int64: (low: FilterSortKey, high: FilterSortKey)] {
        var values: [Int64: (low: FilterSortKey, high: FilterSortKey)] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let sql = """
                SELECT item_id, MIN(number), MAX(number), MIN(text), MAX(text) FROM item_attributes
                WHERE name = ? AND item_id IN (\(databaseQuestionMarks(count: chunk.count))) GROUP BY item_id
                """
            let arguments: StatementArguments = [name] + StatementArguments(chunk)
            if start == 0 { record(sql, arguments) }
            for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
                let low: FilterSortKey = try row.optionalNumber(1).map(FilterSortKey.number) ?? (try row.optionalText(3)).map(FilterSortKey.text) ?? .missing
                let high: FilterSortKey = try row.optionalNumber(2).map(FilterSortKey.number) ?? (try row.optionalText(4)).map(FilterSortKey.text) ?? .missing
                values[try row.integer(0)] = (low, high)
            }
        }
        return values
    }

    /// The page ordered by an attribute (its lowest value ascending, its highest descending; items
    /// without it last), ties by relevance or distance, then in index order.
    mutating func ordered(_ candidates: [Candidate], by order: AttributeOrder) throws -> [Candidate] {
        let values = try attributeValues(order.name, ids: candidates.map(\.id))
        func key(_ candidate: Candidate) -> FilterSortKey {
            guard let value = values[candidate.id] else { return .missing }
            return order.descending ? value.high : value.low
        }
        // Ties by relevance or distance, then in index order (the order items were first indexed in).
        let base = request.orderKey
        let sorted = candidates.sorted { a, b in
            let (x, y) = (key(a), key(b))
            if x != y { return x.precedes(y, descending: order.descending) }
            return (base(a), a.id) < (base(b), b.id)
        }
        guard request.offset < sorted.count else { return [] }
        return try withDetails(Array(sorted[request.offset..<min(sorted.count, needed)]))
    }

    /// The request's total (when it counts it) and facets, counted over every match: this search is the request's,
    /// unpaged, with its typo expansions.
    mutating func totalAndFacets() throws -> (total: Int?, facets: [Facet]) {
        if let parsed, request.near == nil, request.boundingBox == nil {
            // Words alone: one statement for the total, one per facet.
            let total = request.countsTotal ? try count() : nil
            return (total, try request.facets.map { name in try facet(name, expression: parsed.expression) })
        }
        // Otherwise the same search, unpaged, once: its hits are the total and the facets' items.
        let ids = try plan().candidates.map(\.id)
        return (request.countsTotal ? ids.count : nil, try request.facets.map { name in try facet(name, ids: ids) })
    }

    /// How many of `ids` carry each value of an attribute: from the connection's column of it
    /// (``FacetColumn``), or looked up 500 ids per statement.
    mutating func facet(_ name: String, ids: [Int64]) throws -> Facet {
        if let column = try facetColumn(facetColumnAccess(name), lookingUp: ids.count) {
            var counts = column.emptyCounts()
            for id in ids { column.count(id, into: &counts) }
            return Facet(name, groups: column.groups(counts))
        }
        var rows: [Row] = []
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let sql = """
                SELECT kind, number, text, COUNT(DISTINCT item_id) FROM item_attributes
                WHERE name = ? AND item_id IN (\(databaseQuestionMarks(count: chunk.count))) GROUP BY kind, number, text
                """
            let arguments: StatementArguments = [name] + StatementArguments(chunk)
            if start == 0 { record(sql, arguments) }
            rows += try Row.fetchAll(db, sql: sql, arguments: arguments)
        }
        return try Self.facet(name, rows: rows)
    }

    /// A facet over every match of a words-only search. FTS5 drives, in row id order, and each match's attribute
    /// rows are read from the (item, name, value) index alone and counted here. SQLite's
    /// `GROUP BY … COUNT(DISTINCT …)` sorted every row and kept a distinct set per group: 38 ms of a
    /// 13 ms scan for `city` at 940k items.
    ///
    /// Once the lookups this connection spent on the attribute would have read its column, the column is read
    /// (``FacetColumn``) and the matches left are counted from it, their row ids alone read from FTS5: first,
    /// when the matches are known to be that many, or midway.
    mutating func facet(_ name: String, expression: String) throws -> Facet {
        let access = try facetColumnAccess(name)
        var groups: [FacetGroup] = []
        // Where the matches left to count from the column start (all of them: nil).
        var rest: Int64?
        var column = access.flatMap(keptFacetColumn)
        if column == nil, let access = try access.map(priced) {
            let budget = lookupsLeft(access)
            if try matchesExceed(budget) {
                // Reading the column first costs less than looking the matches up (`Europa` with its expansions,
                // 408,720 matches at 940k items: 260 ms looked up).
                column = try readFacetColumn(access)
            } else {
                let looked = try lookUpFacet(name, expression: expression, from: nil, budget: budget)
                groups = looked.groups
                _ = itemSets?.spend(Double(looked.matches) * FilterItemSets.probeCost, atLeast: 0, on: access.key, db: db, version: access.version)
                guard let stop = looked.stop else { return Facet(name, groups: groups) }
                rest = stop
                column = try readFacetColumn(access)
            }
        }
        guard let column else {
            // No column: every match (left) looked up.
            groups += try lookUpFacet(name, expression: expression, from: rest, budget: Int.max).groups
            return Facet(name, groups: groups)
        }
        let (from, arguments) = facetMatches(expression, from: rest)
        let sql = "SELECT items_fts.rowid \(from)"
        record(sql, arguments)
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        let handle = statement.sqliteStatement
        var counts = column.emptyCounts()
        while try SQLiteCall.step(handle, db: db) { column.count(sqlite3_column_int64(handle, 0), into: &counts) }
        return Facet(name, groups: groups + column.groups(counts))
    }

    /// One value's count: `(kind, number, text, items)`, the kind as the index stores it.
    typealias FacetGroup = (kind: Int, number: Double?, text: String?, items: Int)

    /// Whether the words' matches are known to be more than `count`: the planner's estimate (exact from the
    /// leader lists' counts when each alternative has one), trusted only with no filter, which it leaves out.
    private mutating func matchesExceed(_ count: Int) throws -> Bool {
        guard predicate == nil, request.entities.isEmpty, let parsed else { return false }
        let matches = try matchEstimate ?? estimate(parsed)
        matchEstimate = matches
        return matches >= count
    }

    /// The `FROM … WHERE …` of a words-only facet's matches from row id `first` on, FTS5 joined to `joined`
    /// (its arguments first).
    private func facetMatches(_ expression: String, from first: Int64?, joining joined: (sql: String, arguments: StatementArguments) = ("", []))
        -> (sql: String, arguments: StatementArguments) {
        let filter = itemFilter(probing: true, itemID: "items_fts.rowid")
        // Items are joined only for an entity filter. CROSS JOIN keeps FTS5 outside: matches come in row id order.
        let items = request.entities.isEmpty ? "" : " CROSS JOIN items i ON i.id = items_fts.rowid"
        let bound = first == nil ? "" : " AND items_fts.rowid >= ?"
        return ("FROM items_fts\(items)\(joined.sql) WHERE items_fts MATCH ?\(bound)\(filter.sql)",
                joined.arguments + [expression] + (first.map { [$0] } ?? []) + filter.arguments)
    }

    /// Counts the values of a words-only search's matches from row id `first` on, each match looked up in
    /// `item_attributes_by_item`, stopping before the match after `budget` of them.
    /// Returns the counts, the matches looked up and the row id of the first match left (nil: none left).
    private mutating func lookUpFacet(_ name: String, expression: String, from first: Int64?, budget: Int) throws
        -> (groups: [FacetGroup], matches: Int, stop: Int64?) {
        // A LEFT JOIN, so that a match without the attribute is counted as looked up too (its lookup costs the
        // same). FTS5 stays outside: an item's rows come together, in value order, and a value an item holds
        // twice is told from the row before.
        let attributes = " LEFT JOIN item_attributes a INDEXED BY item_attributes_by_item ON a.item_id = items_fts.rowid AND a.name = ?"
        let (from, arguments) = facetMatches(expression, from: first, joining: (attributes, [name]))
        let sql = "SELECT items_fts.rowid, a.kind, a.number, a.text \(from)"
        record(sql, arguments)
        var counts: [FacetColumn.Value: Int] = [:]
        var last: (item: Int64, value: FacetColumn.Value?)?
        var matches = 0
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        let handle = statement.sqliteStatement
        // Stopped at the budget, the statement would hold its snapshot open until its next use.
        defer { sqlite3_reset(handle) }
        func groups() -> [FacetGroup] { counts.map { (kind: Int($0.key.kind), number: $0.key.number, text: $0.key.text, items: $0.value) } }
        while try SQLiteCall.step(handle, db: db) {
            let item = sqlite3_column_int64(handle, 0)
            let value = sqlite3_column_type(handle, 1) == SQLITE_NULL ? nil
                : FacetColumn.Value(kind: sqlite3_column_int64(handle, 1), number: SQLiteCall.optionalDouble(handle, 2),
                                    text: sqlite3_column_type(handle, 3) == SQLITE_NULL ? nil : SQLiteCall.text(handle, 3))
            if let last, last.item == item {
                if let value, let previous = last.value, previous.isStored(as: value) { continue }
            } else {
                if matches == budget { return (groups(), matches, item) }
                matches += 1
            }
            last = (item, value)
            if let value { counts[value, default: 0] += 1 }
        }
        return (groups(), matches, nil)
    }

    /// Where a facet column of attribute `name` is kept on this connection; nil when the search keeps nothing,
    /// the index is empty or its ids reach past ``FacetColumn/mostItemIDs``.
    private func facetColumnAccess(_ name: String) throws -> FacetColumnAccess? {
        guard itemSets != nil, let maxID = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM items")),
              maxID <= FacetColumn.mostItemIDs else { return nil }
        return FacetColumnAccess(name: name, version: try FilterItemSets.Version(db), maxID: maxID)
    }

    /// `access` with what reading the stored column costs: asked once a search is about to decide whether to read
    /// a column, not when one is kept (the count of changes behind it reads up to an eighth of the items' notes).
    private func priced(_ access: FacetColumnAccess) throws -> FacetColumnAccess {
        var access = access
        access.storedRows = try FacetColumn.storedReadCost(access.name, maxID: access.maxID, db: db)
        return access
    }

    /// A facet column's place among what a connection keeps, for the snapshot searched.
    struct FacetColumnAccess {
        var name: String
        var version: FilterItemSets.Version
        /// The largest item id of the snapshot: the column's size, and what reading it is priced at.
        var maxID: Int64
        /// What reading the stored column costs, in ids read from the value indexes; nil when none can be read (or
        /// it was not asked: ``priced(_:)``).
        var storedRows: Int?

        /// What reading the column costs, in ids read from the value indexes (``FilterItemSets/readCost``): the
        /// stored column's, when that is cheaper.
        var readRows: Int { min(storedRows ?? Int.max, Int(maxID) + 1) }
        /// Whether the stored column is read rather than the value indexes.
        var readsStored: Bool { storedRows.map { $0 < Int(maxID) + 1 } ?? false }

        /// Its key among the connection's kept sets (which never begin with `facet column `).
        var key: String { "facet column \(name)" }
    }

    /// How many more matches this connection may look up before its lookups would have paid for reading the
    /// column (one row an item id, the array it fills included).
    private func lookupsLeft(_ access: FacetColumnAccess) -> Int {
        itemSets?.lookupsLeft(beforeReading: access.readRows, on: access.key, db: db, version: access.version) ?? Int.max
    }

    /// The column this connection kept for the attribute at this snapshot, if any.
    private func keptFacetColumn(_ access: FacetColumnAccess) -> FacetColumn? {
        itemSets?.column(for: access.key, db: db, version: access.version)
    }

    /// The attribute's column for a facet about to look up `rows` items: the one kept, or read now when the
    /// connection's lookups, these included, would have paid for it; nil otherwise (the lookups are spent).
    private mutating func facetColumn(_ access: FacetColumnAccess?, lookingUp rows: Int) throws -> FacetColumn? {
        guard let unpriced = access, let itemSets else { return nil }
        if let kept = keptFacetColumn(unpriced) { return kept }
        let access = try priced(unpriced)
        if lookupsLeft(access) <= rows {
            return try readFacetColumn(access)
        }
        _ = itemSets.spend(Double(rows) * FilterItemSets.probeCost, atLeast: 0, on: access.key, db: db, version: access.version)
        return nil
    }

    /// Reads the attribute's column and keeps it for the connection's next searches. A column too large to keep
    /// (values of many bytes, many items holding several) serves this search, and the connection looks up
    /// that attribute's values from then on, until the index changes, rather than read it again and again.
    private mutating func readFacetColumn(_ access: FacetColumnAccess) throws -> FacetColumn? {
        var stored: FacetColumn?
        if access.readsStored {
            record(FacetColumn.storedStatements[0], [access.name])
            record(FacetColumn.storedStatements[1], [])
            record(FacetColumn.storedStatements[2], [access.name])
            stored = try FacetColumn.readStored(access.name, maxID: access.maxID, db: db)
        }
        // None stored, or a damaged one: from the value indexes.
        if stored == nil { for sql in FacetColumn.statements { record(sql, [access.name]) } }
        guard let column = try stored ?? FacetColumn.read(access.name, maxID: access.maxID, db: db) else { return nil }
        if itemSets?.keep(column, for: access.key, db: db, version: access.version) == false {
            itemSets?.keepsMore(than: FilterItemSets.mostIDsPerSet, key: access.key, db: db, version: access.version)
        }
        return column
    }

    /// Facet values from rows `(kind, number, text, count)`, counts of equal renderings added up.
    static func facet(_ name: String, rows: [Row]) throws -> Facet {
        Facet(name, groups: try rows.map { row in
            (kind: Int(try row.integer(0)), number: try row.optionalNumber(1), text: try row.optionalText(2), items: Int(try row.integer(3)))
        })
    }

    /// A filter-only search ordered by an attribute, walked in order through the `(name, value)`
    /// indexes and stopped at the page's end: numbers (and dates), then text, then items without the
    /// attribute; an item with several values counts at its first (lowest ascending, highest descending).
    /// Ties come in index order: no tie-break column, so SQLite walks the index and stops (with one, it
    /// sorted every row first: 2 s). (Ordering every match in Swift took over 10 s for `population > 1000`
    /// over 234,908 places.)
    mutating func filtered(in order: AttributeOrder) throws -> [Candidate] {
        let filter = entityFilter
        let direction = order.descending ? "DESC" : "ASC"
        var seen: Set<Int64> = []
        var page: [Candidate] = []
        func collect(_ sql: String, _ arguments: StatementArguments) throws {
            record(sql, arguments)
            let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
            while page.count < needed, let row = try cursor.next() {
                let id = try row.integer(0)
                guard seen.insert(id).inserted else { continue }
                page.append(Candidate(id: id, uri: try row.text(1), entity: try row.text(2), displayName: try row.text(3),
                                      latitude: try row.optionalNumber(4), longitude: try row.optionalNumber(5), score: try row.number(6)))
            }
        }
        let columns = "i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, i.rank"
        for column in ["number", "text"] where page.count < needed {
            try collect("""
                SELECT \(columns) FROM item_attributes s JOIN items i ON i.id = s.item_id
                WHERE s.name = ? AND s.\(column) IS NOT NULL\(filter.sql) ORDER BY s.\(column) \(direction)
                """, [order.name] + filter.arguments)
        }
        if page.count < needed {
            try collect("SELECT \(columns) FROM items i WHERE i.id NOT IN (SELECT item_id FROM item_attributes WHERE name = ?)\(filter.sql) ORDER BY i.id",
                        [order.name] + filter.arguments)
        }
        return Array(page.dropFirst(request.offset))
    }

    // MARK: Text
}

extension Facet {
    /// A facet from groups of equal values, `(kind, number, text, items)` with the kind as the index
    /// stores it (0 text, 1 number, 2 date): counts of groups that read the same are added up, and values
    /// come most items first, then in text order.
    package init(_ name: String, groups: [(kind: Int, number: Double?, text: String?, items: Int)]) {
        var counts: [String: Int] = [:]
        for group in groups {
            let value: String
            switch group.kind {
            case 0: value = group.text ?? ""
            case 2: value = Date(timeIntervalSinceReferenceDate: group.number ?? 0).formatted(Date.ISO8601FormatStyle())
            default:
                let number = group.number ?? 0
                value = number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            }
            counts[value, default: 0] += group.items
        }
        let values = counts.map { Facet.Value(value: $0.key, count: $0.value) }.sorted { ($1.count, $0.value) < ($0.count, $1.value) }
        self.init(name: name, values: values)
    }
}

/// One item's value of a sort attribute: numbers (and dates) before text, a missing value after both.
package enum FilterSortKey: Hashable {
    case number(Double)
    case text(String)
    case missing

    /// Whether this key comes first in the order (missing values last either way).
    package func precedes(_ other: FilterSortKey, descending: Bool) -> Bool {
        switch (self, other) {
        case (.missing, _): return false
        case (_, .missing): return true
        case (.number(let a), .number(let b)): return descending ? a > b : a < b
        case (.text(let a), .text(let b)):
            let (x, y) = (Array(a.utf8), Array(b.utf8))
            return descending ? y.lexicographicallyPrecedes(x) : x.lexicographicallyPrecedes(y)
        case (.number, .text): return true
        case (.text, .number): return false
        }
    }
}

extension FilterSortKey {
    /// An item's key from its values of the attribute: the lowest (ascending) or highest (descending)
    /// number or date if it has one, else its lowest or highest text (in UTF-8 byte order), else missing.
    package init(_ values: [FilterValue], descending: Bool) {
        let numbers = values.compactMap(\.numberColumn).filter(\.isFinite)
        if let number = descending ? numbers.max() : numbers.min() {
            self = .number(number)
            return
        }
        let texts = values.compactMap(\.textColumn)
        let text = descending ? texts.max(by: BinaryCollation.precedes) : texts.min(by: BinaryCollation.precedes)
        self = text.map(FilterSortKey.text) ?? .missing
    }
}
