import GRDB
import GRDBSQLite

/// Reads made inside one read transaction of a ``PersistentStore``: they all see the same snapshot.
///
/// Obtain one with ``PersistentStore/read(_:)``; it is valid only inside that closure.
public struct StoreSnapshot {
    let store: PersistentStore
    let db: Database

    /// How many primary keys go into one `IN (…)` list.
    package static let batchSize = 500

    func run<T>(_ body: () throws -> T) throws(CoreDataStoreError) -> T {
        do { return try body() } catch { throw PersistentStore.storeError(error, path: store.path) }
    }

    /// Fetches objects by ID in bulk: one query per table per batch of keys (plus one per to-many
    /// relationship), never one per object. IDs of other stores, unknown entities or missing rows are
    /// simply absent from the result; an ID whose row belongs to another entity is absent too.
    /// Store UUIDs match case-insensitively; results are keyed by the store's own spelling
    /// (see ``PersistentStore/canonical(_:)``).
    public func objects(
        _ ids: some Sequence<ManagedObjectID>, relationships: RelationshipSelection = .all
    ) throws(CoreDataStoreError) -> [ManagedObjectID: ManagedObjectSnapshot] {
        var requested: Set<ManagedObjectID> = []
        var keysByRoot: [String: [Int64]] = [:]
        for id in ids where id.storeUUID.caseInsensitiveCompare(store.metadata.storeUUID) == .orderedSame {
            guard store.model.entity(named: id.entityName) != nil, requested.insert(store.canonical(id)).inserted else { continue }
            keysByRoot[store.model.rootEntityName(of: id.entityName), default: []].append(id.primaryKey)
        }
        var result: [ManagedObjectID: ManagedObjectSnapshot] = [:]
        result.reserveCapacity(requested.count)
        for (root, keys) in keysByRoot {
            guard let reader = store.tableReaders[root] else { continue }
            // Sorted and unique: the same key may be asked for as two entities of one hierarchy.
            let sortedKeys = Array(Set(keys)).sorted()
            for start in stride(from: 0, to: sortedKeys.count, by: Self.batchSize) {
                let chunk = Array(sortedKeys[start..<min(start + Self.batchSize, sortedKeys.count)])
                let sql = "SELECT \(reader.selectList) FROM \(reader.tableName) WHERE Z_PK IN (\(databaseQuestionMarks(count: chunk.count)))"
                // Only the entity a URI names matches: …/Book/p11 does not find a GraphicNovel row.
                for snapshot in try rows(reader: reader, sql: sql, arguments: StatementArguments(chunk), relationships: relationships)
                where requested.contains(snapshot.objectID) {
                    result[snapshot.objectID] = snapshot
                }
            }
        }
        return result
    }

    /// Fetches one object, or nil when it does not exist.
    public func object(_ id: ManagedObjectID, relationships: RelationshipSelection = .all) throws(CoreDataStoreError) -> ManagedObjectSnapshot? {
        try objects([id], relationships: relationships)[id]
    }

    /// Pages through the objects of an entity (sub-entities included) in primary-key order: the rows
    /// with `Z_PK > primaryKey`, at most `limit` of them. Resumable from the last key returned.
    public func objects(
        ofEntity entity: String, afterPrimaryKey primaryKey: Int64 = 0, limit: Int,
        relationships: RelationshipSelection = .all
    ) throws(CoreDataStoreError) -> [ManagedObjectSnapshot] {
        guard store.model.entity(named: entity) != nil else { throw .unknownEntity(name: entity) }
        guard let reader = store.tableReaders[store.model.rootEntityName(of: entity)] else { return [] }
        let kinds = store.layout.entityNumbers(ofKind: entity, model: store.model)
        guard !kinds.isEmpty else { return [] }
        let sql = "SELECT \(reader.selectList) FROM \(reader.tableName) WHERE Z_PK > ? AND Z_ENT IN (\(kinds.map(String.init).joined(separator: ", "))) ORDER BY Z_PK LIMIT ?"
        return try rows(reader: reader, sql: sql, arguments: [primaryKey, limit], relationships: relationships)
    }

    /// The number of objects of an entity, sub-entities included (those after a primary key, if given).
    public func count(ofEntity entity: String, afterPrimaryKey primaryKey: Int64 = 0) throws(CoreDataStoreError) -> Int {
        guard store.model.entity(named: entity) != nil else { throw .unknownEntity(name: entity) }
        guard let table = store.tableReaders[store.model.rootEntityName(of: entity)] else { return 0 }
        let kinds = store.layout.entityNumbers(ofKind: entity, model: store.model).map(String.init).joined(separator: ", ")
        guard !kinds.isEmpty else { return 0 }
        return try run {
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.tableName) WHERE Z_PK > ? AND Z_ENT IN (\(kinds))", arguments: [primaryKey]) ?? 0
        }
    }

    private func rows(
        reader: TableReader, sql: String, arguments: StatementArguments, relationships: RelationshipSelection
    ) throws(CoreDataStoreError) -> [ManagedObjectSnapshot] {
        let uuid = store.metadata.storeUUID
        let names = store.entityNameByNumber
        var snapshots: [ManagedObjectSnapshot] = []
        try run {
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments(arguments)
            defer { sqlite3_reset(statement.sqliteStatement) } // release the read lock promptly
            let handle = statement.sqliteStatement
            while true {
                let status = sqlite3_step(handle)
                if status == SQLITE_DONE { break }
                guard status == SQLITE_ROW else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: status), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
                let primaryKey = sqlite3_column_int64(handle, 0)
                let number = Int(sqlite3_column_int64(handle, 1))
                guard let entity = names[number] else { continue } // a row of an entity the model lacks
                let attributeSlots = reader.attributeSlots[number] ?? []
                var attributeValues: [AttributeValue?] = []
                attributeValues.reserveCapacity(attributeSlots.count)
                for slot in attributeSlots {
                    attributeValues.append(AttributeValue(statement: handle, column: Int32(slot.index), type: slot.type))
                }
                let toOneSlots = reader.toOneSlots[number] ?? []
                var destinations: [ManagedObjectID?] = []
                destinations.reserveCapacity(toOneSlots.count)
                for slot in toOneSlots {
                    guard sqlite3_column_type(handle, Int32(slot.keyIndex)) != SQLITE_NULL else { destinations.append(nil); continue }
                    let key = sqlite3_column_int64(handle, Int32(slot.keyIndex))
                    var concrete = slot.destination
                    if let entityIndex = slot.entityIndex, sqlite3_column_type(handle, Int32(entityIndex)) != SQLITE_NULL,
                       let name = names[Int(sqlite3_column_int64(handle, Int32(entityIndex)))] {
                        concrete = name
                    }
                    destinations.append(ManagedObjectID(storeUUID: uuid, entityName: concrete, primaryKey: key))
                }
                let attributes = NamedValues(keys: reader.attributeKeys[number] ?? .init([]), values: attributeValues)
                let toOne = NamedValues(keys: reader.toOneKeys[number] ?? .init([]), values: destinations)
                snapshots.append(ManagedObjectSnapshot(
                    objectID: ManagedObjectID(storeUUID: uuid, entityName: entity, primaryKey: primaryKey),
                    version: sqlite3_column_int64(handle, 2), attributes: attributes, toOne: toOne))
            }
        }
        try fillToMany(&snapshots, reader: reader, relationships: relationships)
        return snapshots
    }

    /// Adds to-many relationships: one query per relationship per batch, for all owners at once.
    private func fillToMany(
        _ snapshots: inout [ManagedObjectSnapshot], reader: TableReader, relationships: RelationshipSelection
    ) throws(CoreDataStoreError) {
        guard !snapshots.isEmpty, relationships != .toOneOnly else { return }
        let uuid = store.metadata.storeUUID
        let names = store.entityNameByNumber
        var positions: [Int64: Int] = [:]
        var ownersBySlot: [String: (slot: TableReader.ToManySlot, owners: [Int64])] = [:]
        for (index, snapshot) in snapshots.enumerated() {
            positions[snapshot.objectID.primaryKey] = index
            let number = store.layout.entityNumbers[snapshot.entityName] ?? 0
            for slot in reader.toManySlots[number] ?? [] where relationships.includesToMany(slot.name) {
                ownersBySlot[slot.sqlTemplate + "\u{0}" + slot.name, default: (slot, [])].owners.append(snapshot.objectID.primaryKey)
                snapshots[index].toMany[slot.name] = []
            }
        }
        for (slot, owners) in ownersBySlot.values {
            let sql = slot.sqlTemplate.replacingOccurrences(of: "%@", with: databaseQuestionMarks(count: owners.count))
            try run {
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(owners))
                while let row = try cursor.next() {
                    let checked = row.checked(table: slot.table, path: store.path)
                    guard let owner = try checked.integer(0, "owner key"), let position = positions[owner],
                          let key = try checked.integer(1, "destination key") else { continue }
                    let entity = try checked.integer(2, "Z_ENT").flatMap { names[Int(clamping: $0)] } ?? slot.destination
                    snapshots[position].toMany[slot.name, default: []].append(
                        ManagedObjectID(storeUUID: uuid, entityName: entity, primaryKey: key))
                }
            }
        }
    }
}
