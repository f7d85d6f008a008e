import Foundation
import GRDB

extension StoreSnapshot {
    /// The oldest and newest transaction numbers.
    public func historyBounds() throws(CoreDataStoreError) -> HistoryBounds {
        guard store.hasHistory else { throw .historyNotTracked(path: store.path) }
        let path = store.path
        return try run {
            let row = try Row.fetchOne(db, sql: "SELECT MIN(Z_PK), MAX(Z_PK) FROM ATRANSACTION")?.checked(table: "ATRANSACTION", path: path)
            let oldest = try row?.integer(0, "Z_PK")
            let newestRow = try row?.integer(1, "Z_PK") ?? 0
            // Z_MAX remembers numbers handed out even after every transaction was purged.
            let handedOut = try Row.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16002")?
                .checked(table: "Z_PRIMARYKEY", path: path).integer(0, "Z_MAX") ?? 0
            return HistoryBounds(oldest: oldest, newest: max(newestRow, handedOut))
        }
    }

    /// When transaction `number` was saved, or nil when the store does not hold it (never written or purged).
    public func timestamp(ofTransaction number: Int64) throws(CoreDataStoreError) -> Date? {
        guard store.hasHistory, store.catalog.has("ZTIMESTAMP", in: "ATRANSACTION") else { return nil }
        let path = store.path
        return try run {
            guard let row = try Row.fetchOne(db, sql: "SELECT ZTIMESTAMP FROM ATRANSACTION WHERE Z_PK = ?", arguments: [number]) else { return nil }
            // Normalized exactly as transactions(after:) does, so the two always agree on a transaction's date.
            return Date(timeIntervalSinceReferenceDate: Self.finite(try row.checked(table: "ATRANSACTION", path: path).double(0, "ZTIMESTAMP")))
        }
    }

    /// Transactions after `token`, oldest first, with their changes.
    ///
    /// Returns at most `limit` transactions and stops adding more once `changeLimit` changes are
    /// collected (a single larger transaction is still returned whole, so progress is guaranteed).
    public func transactions(after token: Int64, limit: Int = 100, changeLimit: Int = 50_000) throws(CoreDataStoreError) -> [HistoryTransaction] {
        guard store.hasHistory else { throw .historyNotTracked(path: store.path) }
        guard limit > 0 else { return [] }
        let sql = try transactionQuery()
        let path = store.path
        var transactions: [HistoryTransaction] = []
        try run {
            var changeCount = 0
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: [token, limit])
            while let row = try cursor.next() {
                let checked = row.checked(table: "ATRANSACTION", path: path)
                let count = Int(clamping: try checked.integer(6, "changes") ?? 0)
                if !transactions.isEmpty && changeCount + count > changeLimit { break }
                changeCount += count
                transactions.append(HistoryTransaction(
                    number: try checked.integer(0, "Z_PK") ?? 0,
                    timestamp: Date(timeIntervalSinceReferenceDate: Self.finite(try checked.double(1, "ZTIMESTAMP"))),
                    author: try checked.string(2, "ZAUTHOR"), bundleID: try checked.string(3, "ZBUNDLEID"),
                    processID: try checked.string(4, "ZPROCESSID"), contextName: try checked.string(5, "ZCONTEXTNAME")))
            }
        }
        guard let first = transactions.first?.number, let last = transactions.last?.number else { return [] }
        let changes = try changes(from: first, through: last)
        for index in transactions.indices {
            transactions[index].changes = changes[transactions[index].number] ?? []
        }
        return transactions
    }

    /// Whether history holds a transaction after `token`: one primary-key probe.
    public func hasTransactions(after token: Int64) throws(CoreDataStoreError) -> Bool {
        guard store.hasHistory else { throw .historyNotTracked(path: store.path) }
        return try run { try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM ATRANSACTION WHERE Z_PK > ?)", arguments: [token]) ?? false }
    }

    /// How many changes history holds after `token`: one indexed row count, what a catch-up has ahead of it.
    public func changeCount(after token: Int64) throws(CoreDataStoreError) -> Int {
        guard store.hasHistory else { throw .historyNotTracked(path: store.path) }
        return try run { try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ACHANGE WHERE ZTRANSACTIONID > ?", arguments: [token]) ?? 0 }
    }

    /// A timestamp Foundation can represent: NaN, infinities and absurd magnitudes read as the reference date.
    private static func finite(_ seconds: Double?) -> Double {
        guard let seconds, seconds.isFinite, abs(seconds) < 1e12 else { return 0 }
        return seconds
    }

    /// The transactions query for the store's history layout. Current stores intern author, bundle id,
    /// process id and context name in `ATRANSACTIONSTRING` (`…TS` columns); the first layout (macOS 10.13,
    /// iOS 11) has no such table and keeps the strings inline. Read the interned name first, then the inline one.
    private func transactionQuery() throws(CoreDataStoreError) -> String {
        let catalog = store.catalog
        guard catalog.has("Z_PK", in: "ATRANSACTION") else {
            throw .unsupportedStore(path: store.path, detail: "its ATRANSACTION table has no Z_PK column")
        }
        let interned = catalog.tables["ATRANSACTIONSTRING"] != nil && catalog.has("ZNAME", in: "ATRANSACTIONSTRING")
        var joins: [String] = []
        var fields: [String] = []
        for (alias, field) in [("a", "ZAUTHOR"), ("b", "ZBUNDLEID"), ("p", "ZPROCESSID"), ("c", "ZCONTEXTNAME")] {
            let inline = catalog.has(field, in: "ATRANSACTION") ? "t.\(field)" : "NULL"
            if interned && catalog.has(field + "TS", in: "ATRANSACTION") {
                joins.append("LEFT JOIN ATRANSACTIONSTRING \(alias) ON \(alias).Z_PK = t.\(field)TS")
                fields.append("COALESCE(\(alias).ZNAME, \(inline))")
            } else {
                fields.append(inline)
            }
        }
        let timestamp = catalog.has("ZTIMESTAMP", in: "ATRANSACTION") ? "t.ZTIMESTAMP" : "NULL"
        return """
            SELECT t.Z_PK, \(timestamp), \(fields.joined(separator: ", ")),
                   (SELECT COUNT(*) FROM ACHANGE WHERE ZTRANSACTIONID = t.Z_PK)
            FROM ATRANSACTION t \(joins.joined(separator: " "))
            WHERE t.Z_PK > ? ORDER BY t.Z_PK LIMIT ?
            """
    }

    /// All changes of the transactions numbered `first...last`, grouped by transaction.
    private func changes(from first: Int64, through last: Int64) throws(CoreDataStoreError) -> [Int64: [HistoryChange]] {
        let catalog = store.catalog
        for column in ["Z_PK", "ZTRANSACTIONID", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK"] where !catalog.has(column, in: "ACHANGE") {
            throw .unsupportedStore(path: store.path, detail: "its ACHANGE table has no \(column) column")
        }
        let tombstoneColumns = (catalog.tables["ACHANGE"] ?? []).map(\.name).filter { $0.hasPrefix("ZTOMBSTONE") }
            .sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }
        let bitmap = catalog.has("ZCOLUMNS", in: "ACHANGE") ? "ZCOLUMNS" : "NULL"
        let extra = tombstoneColumns.isEmpty ? "" : ", " + tombstoneColumns.joined(separator: ", ")
        let sql = "SELECT Z_PK, ZTRANSACTIONID, ZCHANGETYPE, ZENTITY, ZENTITYPK, \(bitmap)\(extra) FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY ZTRANSACTIONID, Z_PK"
        let uuid = store.metadata.storeUUID
        let path = store.path
        var byTransaction: [Int64: [HistoryChange]] = [:]
        var columnOrders: [String: [String]] = [:]
        try run {
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: [first, last])
            while let row = try cursor.next() {
                let checked = row.checked(table: "ACHANGE", path: path)
                let number = Int(clamping: try checked.integer(3, "ZENTITY") ?? 0)
                // An entity a later migration removed keeps its Z_PRIMARYKEY name, if nothing else.
                let entity = store.entityName(forNumber: number)
                    ?? store.catalog.primaryKeys.first { $0.entityNumber == number }?.name ?? "Entity\(number)"
                // An unknown change type is treated as an update: re-reading the object is always safe.
                let type = HistoryChange.ChangeType(rawValue: Int(clamping: try checked.integer(2, "ZCHANGETYPE") ?? 1)) ?? .update
                var change = HistoryChange(
                    number: try checked.integer(0, "Z_PK") ?? 0,
                    objectID: ManagedObjectID(storeUUID: uuid, entityName: entity, primaryKey: try checked.integer(4, "ZENTITYPK") ?? 0),
                    type: type)
                if type == .update, let bitmap = try checked.data(5, "ZCOLUMNS") {
                    let order = columnOrders[entity] ?? store.model.historyColumnOrder(of: entity)
                    columnOrders[entity] = order
                    change.updatedProperties = HistoryColumnBitmap.decode(bitmap, order: order)
                }
                if type == .delete, !tombstoneColumns.isEmpty {
                    var tombstone: [String: AttributeValue] = [:]
                    for (offset, attribute) in store.model.tombstoneAttributes(of: entity).enumerated() where offset < tombstoneColumns.count {
                        tombstone[attribute.name] = AttributeValue(row[6 + offset] as DatabaseValue, type: attribute.type)
                    }
                    change.tombstone = tombstone
                }
                byTransaction[try checked.integer(1, "ZTRANSACTIONID") ?? 0, default: []].append(change)
            }
        }
        return byTransaction
    }
}

extension PersistentStore {
    /// Transactions after `token` in one read transaction; see ``StoreSnapshot/transactions(after:limit:changeLimit:)``.
    public func transactions(after token: Int64, limit: Int = 100) throws(CoreDataStoreError) -> [HistoryTransaction] {
        try read { snapshot in try snapshot.transactions(after: token, limit: limit) }
    }

    /// The store's history bounds.
    public func historyBounds() throws(CoreDataStoreError) -> HistoryBounds {
        try read { snapshot in try snapshot.historyBounds() }
    }

    /// When transaction `number` was saved; see ``StoreSnapshot/timestamp(ofTransaction:)``.
    public func timestamp(ofTransaction number: Int64) throws(CoreDataStoreError) -> Date? {
        try read { snapshot in try snapshot.timestamp(ofTransaction: number) }
    }

    /// Fetches objects by ID in one read transaction; see ``StoreSnapshot/objects(_:relationships:)``.
    public func objects(_ ids: [ManagedObjectID], relationships: RelationshipSelection = .all) throws(CoreDataStoreError) -> [ManagedObjectID: ManagedObjectSnapshot] {
        try read { snapshot in try snapshot.objects(ids, relationships: relationships) }
    }
}
