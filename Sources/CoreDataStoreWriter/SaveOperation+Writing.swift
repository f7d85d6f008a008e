import CoreDataStore
import Foundation
import GRDB
import SQLiteFiles
import GRDBSQLite

/// The rows, the primary-key counters and the history transaction, written with the C API.
extension SaveOperation {
    mutating func writeRows() throws {
        // Deleted rows go first so their primary keys cannot collide with anything written after.
        var deletedByTable: [String: [Int64]] = [:]
        for id in deleted {
            if let table = layout.table(for: id.entityName, model: model) { deletedByTable[table.name, default: []].append(id.primaryKey) }
        }
        for (table, keys) in deletedByTable {
            for start in stride(from: 0, to: keys.count, by: StoreSnapshot.batchSize) {
                let chunk = Array(keys[start..<min(start + StoreSnapshot.batchSize, keys.count)])
                try db.execute(sql: "DELETE FROM \(table) WHERE Z_PK IN (\(databaseQuestionMarks(count: chunk.count)))", arguments: StatementArguments(chunk))
            }
        }
        var insertStatements: [String: Statement] = [:]
        for id in insertedIDs where !deletedSet.contains(id) {
            guard let plan = writer.plans[id.entityName], let row = insertRows[id] else { continue }
            let statement = try insertStatements[plan.table] ?? db.cachedStatement(sql: plan.insertSQL)
            insertStatements[plan.table] = statement
            let handle = statement.sqliteStatement
            sqlite3_reset(handle)
            sqlite3_bind_int64(handle, 1, id.primaryKey)
            sqlite3_bind_int64(handle, 2, plan.entityNumber)
            for (index, value) in row.enumerated() { Self.bind(value, to: handle, at: Int32(index + 3)) }
            try Self.step(handle, db: db)
        }
        for id in touchOrder where !inserted.contains(id) && !deletedSet.contains(id) {
            guard let table = layout.table(for: id.entityName, model: model) else { continue }
            let values = (columnWrites[id] ?? [:]).sorted { $0.key < $1.key }
            let assignments = (values.map { "\($0.key) = ?" } + ["Z_OPT = Z_OPT + 1"]).joined(separator: ", ")
            try db.execute(sql: "UPDATE \(table.name) SET \(assignments) WHERE Z_PK = ?",
                           arguments: StatementArguments(values.map(\.value) + [id.primaryKey.databaseValue]))
        }
    }

    /// Binds a value with the C API: GRDB's argument arrays cost more than the insert on bulk saves.
    static func bind(_ value: DatabaseValue, to handle: OpaquePointer, at index: Int32) {
        SQLiteBinding.bind(value, handle, index)
    }

    static func step(_ handle: OpaquePointer, db: Database) throws {
        let status = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard status == SQLITE_DONE || status == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: status), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    func intern(_ text: String?) throws -> Int64? {
        guard let text else { return nil }
        if let key = try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?", arguments: [text]) { return key }
        let key = try allocate(16003, count: 1)
        try db.execute(sql: "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, 16003, NULL, ?)", arguments: [key, text])
        return key
    }

    /// Hands out `count` primary keys of a history entity through `Z_MAX`, as Core Data does.
    func allocate(_ entity: Int, count: Int) throws -> Int64 {
        let table = entity == 16001 ? "ACHANGE" : entity == 16002 ? "ATRANSACTION" : "ATRANSACTIONSTRING"
        let max = try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [entity])
        let used = try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM \(table)") ?? 0
        let first = Swift.max(max ?? 0, used) + 1
        if max == nil {
            let name = table.dropFirst()
            try db.execute(sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, ?)", arguments: [entity, String(name), first + Int64(count) - 1])
        } else {
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", arguments: [first + Int64(count) - 1, entity])
        }
        return first
    }

    mutating func writeHistory(_ request: SaveRequest) throws -> Int64? {
        let updatedIDs = touchOrder.filter { !inserted.contains($0) && !deletedSet.contains($0) }
        let written = insertedIDs.filter { !deletedSet.contains($0) }
        let changeCount = written.count + updatedIDs.count + deleted.count
        guard changeCount > 0 else { return nil }
        let transaction = try allocate(16002, count: 1)
        let timestamp = (request.timestamp ?? Date()).timeIntervalSinceReferenceDate
        try db.execute(sql: """
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
            VALUES (?, 16002, NULL, ?, ?, ?, ?, ?)
            """, arguments: [transaction, try intern(request.author), try intern(request.bundleID),
                             try intern(request.contextName), try intern(request.processID), timestamp])
        var changeKey = try allocate(16001, count: changeCount)
        let tombstoneColumns = (0..<writer.tombstoneColumnCount).map { ", ZTOMBSTONE\($0)" }.joined()
        let tombstonePlaceholders = String(repeating: ", ?", count: writer.tombstoneColumnCount)
        let statement = try db.cachedStatement(sql: "INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneColumns)) VALUES (?, 16001, NULL, ?, ?, ?, ?, ?\(tombstonePlaceholders))")
        var orders: [String: [String]] = [:]
        let handle = statement.sqliteStatement
        func record(_ id: ManagedObjectID, type: HistoryChange.ChangeType) throws {
            sqlite3_reset(handle)
            sqlite3_bind_int64(handle, 1, changeKey)
            sqlite3_bind_int64(handle, 2, Int64(type.rawValue))
            sqlite3_bind_int64(handle, 3, writer.plans[id.entityName]?.entityNumber ?? 0)
            sqlite3_bind_int64(handle, 4, id.primaryKey)
            sqlite3_bind_int64(handle, 5, transaction)
            if type == .update {
                let order = orders[id.entityName] ?? model.historyColumnOrder(of: id.entityName)
                orders[id.entityName] = order
                Self.bind(HistoryColumnBitmap.encode(touched[id] ?? [], order: order).databaseValue, to: handle, at: 6)
            } else {
                sqlite3_bind_null(handle, 6)
            }
            let stone = type == .delete ? tombstones[id] ?? [] : []
            for index in 0..<writer.tombstoneColumnCount { Self.bind(index < stone.count ? stone[index] : .null, to: handle, at: Int32(7 + index)) }
            try Self.step(handle, db: db)
            changeKey += 1
        }
        for id in written { try record(id, type: .insert) }
        for id in updatedIDs { try record(id, type: .update) }
        for id in deleted { try record(id, type: .delete) }
        return transaction
    }
}
