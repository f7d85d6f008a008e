import CoreDataStore
import Foundation
import GRDB
import SQLiteFiles
import GRDBSQLite

/// One save in progress inside a write transaction. Collects row writes and the objects each change
/// touches (including through inverse relationships and delete rules), then writes rows and history.
struct SaveOperation {
    let writer: StoreWriter
    let db: Database
    var model: ManagedObjectModel { writer.model }
    var layout: StoreLayout { writer.layout }

    /// Objects inserted by this save, by request index.
    var insertedIDs: [ManagedObjectID] = []
    var inserted: Set<ManagedObjectID> = []
    /// Rows of inserted objects, in their table's column order (see ``EntityWritePlan``).
    var insertRows: [ManagedObjectID: [DatabaseValue]] = [:]
    /// Column values of updates to saved rows.
    var columnWrites: [ManagedObjectID: [String: DatabaseValue]] = [:]
    /// Properties each object's change touched, for `ZCOLUMNS` and `Z_OPT`.
    var touched: [ManagedObjectID: Set<String>] = [:]
    var touchOrder: [ManagedObjectID] = []
    var deleted: [ManagedObjectID] = []
    var deletedSet: Set<ManagedObjectID> = []
    /// Objects this save inserts that a cascade in the same save deletes: never written.
    var discarded: [ManagedObjectID] = []
    var tombstones: [ManagedObjectID: [DatabaseValue]] = [:]
    /// Current to-one destinations as this save has set them, so repeated assignments see each other.
    var toOneState: [ManagedObjectID: [String: ManagedObjectID?]] = [:]
    /// Saved objects known to exist, with their concrete entity.
    var existing: Set<ManagedObjectID> = []

    init(writer: StoreWriter, db: Database) {
        self.writer = writer
        self.db = db
    }

    func reject(_ reason: String) -> CoreDataStoreError { .saveRejected(reason: reason) }

    mutating func apply(_ request: SaveRequest) throws -> SaveResult {
        try allocateInserts(request.inserts)
        try verifyExistence(of: request)
        for (index, insert) in request.inserts.enumerated() {
            try writeAttributes(insert.attributes, of: insertedIDs[index], isInsert: true)
        }
        for update in request.updates {
            try writeAttributes(update.attributes, of: update.objectID, isInsert: false)
        }
        for (index, insert) in request.inserts.enumerated() {
            for (name, value) in insert.relationships.sorted(by: { $0.key < $1.key }) {
                try assign(value, to: name, of: insertedIDs[index])
            }
        }
        for update in request.updates {
            for (name, value) in update.relationships.sorted(by: { $0.key < $1.key }) {
                try assign(value, to: name, of: update.objectID)
            }
        }
        for id in request.deletes { try delete(id) }
        try writeRows()
        let transaction = writer.tracksHistory ? try writeHistory(request) : nil
        let updated = touchOrder.filter { !inserted.contains($0) && !deletedSet.contains($0) }
        return SaveResult(transactionNumber: transaction, insertedObjectIDs: insertedIDs,
                          updatedObjectIDs: updated, deletedObjectIDs: deleted, discardedObjectIDs: discarded)
    }

    // MARK: - Identities

    func id(_ reference: ObjectReference) throws -> ManagedObjectID {
        switch reference {
        case .saved(let id):
            guard id.storeUUID == writer.storeUUID else {
                throw CoreDataStoreError.foreignObjectID(uri: id.uriRepresentation, storeUUID: writer.storeUUID)
            }
            return id
        case .inserted(let index):
            guard insertedIDs.indices.contains(index) else { throw reject("reference to insert #\(index), which this save does not have") }
            return insertedIDs[index]
        }
    }

    mutating func allocateInserts(_ inserts: [SaveRequest.Insert]) throws {
        var next: [String: Int64] = [:]
        for insert in inserts {
            guard let entity = model.entity(named: insert.entity), let plan = writer.plans[insert.entity] else {
                throw CoreDataStoreError.unknownEntity(name: insert.entity)
            }
            guard !entity.isAbstract else { throw reject("entity \(insert.entity) is abstract; insert one of its sub-entities") }
            let root = plan.rootEntity
            if next[root] == nil {
                guard let table = layout.tables[root], let number = layout.entityNumbers[root] else {
                    throw CoreDataStoreError.unknownEntity(name: insert.entity)
                }
                let max = try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [number]) ?? 0
                let used = try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM \(table.name)") ?? 0
                next[root] = Swift.max(max, used) + 1
            }
            let primaryKey = next[root] ?? 1
            next[root] = primaryKey + 1
            let id = ManagedObjectID(storeUUID: writer.storeUUID, entityName: insert.entity, primaryKey: primaryKey)
            insertedIDs.append(id)
            inserted.insert(id)
            touch(id, [])
        }
        for (root, nextKey) in next {
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", arguments: [nextKey - 1, layout.entityNumbers[root]])
        }
    }

    /// Checks, one query per table, that every saved object the request names exists as that entity.
    mutating func verifyExistence(of request: SaveRequest) throws {
        var mentioned: Set<ManagedObjectID> = Set(request.updates.map(\.objectID)).union(request.deletes)
        for change in request.inserts.map(\.relationships) + request.updates.map(\.relationships) {
            for value in change.values {
                switch value {
                case .toOne(.saved(let id)?): mentioned.insert(id)
                case .toMany(let references): for case .saved(let id) in references { mentioned.insert(id) }
                default: break
                }
            }
        }
        try confirm(mentioned)
    }

    mutating func confirm(_ ids: Set<ManagedObjectID>) throws {
        let unknown = ids.subtracting(existing)
        guard !unknown.isEmpty else { return }
        var byRoot: [String: [ManagedObjectID]] = [:]
        for id in unknown {
            _ = try self.id(.saved(id))
            guard model.entity(named: id.entityName) != nil else { throw CoreDataStoreError.unknownEntity(name: id.entityName) }
            byRoot[model.rootEntityName(of: id.entityName), default: []].append(id)
        }
        for (root, ids) in byRoot {
            guard let table = layout.tables[root] else { continue }
            let found = try Row.fetchAll(db, sql: "SELECT Z_PK, Z_ENT FROM \(table.name) WHERE Z_PK IN (\(databaseQuestionMarks(count: ids.count)))",
                                         arguments: StatementArguments(ids.map(\.primaryKey)))
            let entityByKey = Dictionary(found.map { ($0[0] as Int64, $0[1] as Int) }, uniquingKeysWith: { first, _ in first })
            for id in ids {
                guard let number = entityByKey[id.primaryKey], layout.entityNumbers[id.entityName] == number else {
                    throw reject("\(id.uriRepresentation) does not exist in the store")
                }
                existing.insert(id)
            }
        }
    }

    /// Records one touched property without building a set (the common case of an inverse).
    mutating func touch(_ id: ManagedObjectID, property: String) {
        if touched[id] == nil { touchOrder.append(id); touched[id] = [] }
        guard !inserted.contains(id), touched[id]?.contains(property) == false else { return }
        touched[id]?.insert(property)
    }

    mutating func touch(_ id: ManagedObjectID, _ properties: Set<String>) {
        if touched[id] == nil { touchOrder.append(id) }
        // Inserted objects record no updated properties: skip building their sets.
        guard !inserted.contains(id) else { if touched[id] == nil { touched[id] = [] }; return }
        touched[id, default: []].formUnion(properties)
    }
}
