import Foundation
import GRDB

extension StoreSnapshot {
    /// The oldest and newest transaction numbers.
    public func historyBounds() throws(CoreDataStoreError) -> HistoryBounds {
        guard store.hasHistory else { throw .historyNotTracked(path: store.path) }
        return try run {
            let row = try Row.fetchOne(db, sql: "SELECT MIN(Z_PK), MAX(Z_PK) FROM ATRANSACTION")
            let oldest: Int64? = row?[0]
            let newestRow: Int64 = row?[1] ?? 0
            // Z_MAX remembers numbers handed out even after every transaction was purged.
            let handedOut = try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16002") ?? 0
            return HistoryBounds(oldest: oldest, newest: max(newestRow, handedOut))
        }
    }

    /// Transactions after `token`, oldest first, with their changes.
    ///
    /// Returns at most `limit` transactions and stops adding more once `changeLimit` changes are
    /// collected (a single larger transaction is still returned whole, so progress is guaranteed).
    public func transactions(after token: Int64, limit: Int = 100, changeLimit: Int = 50_000) throws(CoreDataStoreError) -> [HistoryTransaction] {
        guard store.hasHistory else { throw .historyNotTracked(path: store.path) }
        guard limit > 0 else { return [] }
        var transactions: [HistoryTransaction] = []
        try run {
            let sql = """
                SELECT t.Z_PK, t.ZTIMESTAMP,
                       COALESCE(a.ZNAME, t.ZAUTHOR), COALESCE(b.ZNAME, t.ZBUNDLEID),
                       COALESCE(p.ZNAME, t.ZPROCESSID), COALESCE(c.ZNAME, t.ZCONTEXTNAME),
                       (SELECT COUNT(*) FROM ACHANGE WHERE ZTRANSACTIONID = t.Z_PK)
                FROM ATRANSACTION t
                LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
                LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS
                LEFT JOIN ATRANSACTIONSTRING p ON p.Z_PK = t.ZPROCESSIDTS
                LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS
                WHERE t.Z_PK > ? ORDER BY t.Z_PK LIMIT ?
                """
            var changeCount = 0
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: [token, limit])
            while let row = try cursor.next() {
                let count: Int = row[6]
                if !transactions.isEmpty && changeCount + count > changeLimit { break }
                changeCount += count
                transactions.append(HistoryTransaction(
                    number: row[0], timestamp: Date(timeIntervalSinceReferenceDate: row[1] ?? 0),
                    author: row[2], bundleID: row[3], processID: row[4], contextName: row[5]))
            }
        }
        guard let first = transactions.first?.number, let last = transactions.last?.number else { return [] }
        let changes = try changes(from: first, through: last)
        for index in transactions.indices {
            transactions[index].changes = changes[transactions[index].number] ?? []
        }
        return transactions
    }

    /// All changes of the transactions numbered `first...last`, grouped by transaction.
    private func changes(from first: Int64, through last: Int64) throws(CoreDataStoreError) -> [Int64: [HistoryChange]] {
        let tombstoneColumns = (store.catalog.tables["ACHANGE"] ?? []).map(\.name).filter { $0.hasPrefix("ZTOMBSTONE") }
            .sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }
        let extra = tombstoneColumns.isEmpty ? "" : ", " + tombstoneColumns.joined(separator: ", ")
        let sql = "SELECT Z_PK, ZTRANSACTIONID, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZCOLUMNS\(extra) FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY ZTRANSACTIONID, Z_PK"
        let uuid = store.metadata.storeUUID
        var byTransaction: [Int64: [HistoryChange]] = [:]
        var columnOrders: [String: [String]] = [:]
        try run {
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: [first, last])
            while let row = try cursor.next() {
                let number: Int = row[3] ?? 0
                // An entity a later migration removed keeps its Z_PRIMARYKEY name, if nothing else.
                let entity = store.entityName(forNumber: number)
                    ?? store.catalog.primaryKeys.first { $0.entityNumber == number }?.name ?? "Entity\(number)"
                let type = HistoryChange.ChangeType(rawValue: row[2] ?? 1) ?? .update
                var change = HistoryChange(
                    number: row[0], objectID: ManagedObjectID(storeUUID: uuid, entityName: entity, primaryKey: row[4] ?? 0),
                    type: type)
                if type == .update, let bitmap: Data = row[5] {
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
                byTransaction[row[1] ?? 0, default: []].append(change)
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

    /// Fetches objects by ID in one read transaction; see ``StoreSnapshot/objects(_:relationships:)``.
    public func objects(_ ids: [ManagedObjectID], relationships: RelationshipSelection = .all) throws(CoreDataStoreError) -> [ManagedObjectID: ManagedObjectSnapshot] {
        try read { snapshot in try snapshot.objects(ids, relationships: relationships) }
    }
}
