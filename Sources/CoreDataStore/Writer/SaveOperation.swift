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
    private var insertedIDs: [ManagedObjectID] = []
    private var inserted: Set<ManagedObjectID> = []
    /// Rows of inserted objects, in their table's column order (see ``EntityWritePlan``).
    private var insertRows: [ManagedObjectID: [DatabaseValue]] = [:]
    /// Column values of updates to saved rows.
    private var columnWrites: [ManagedObjectID: [String: DatabaseValue]] = [:]
    /// Properties each object's change touched, for `ZCOLUMNS` and `Z_OPT`.
    private var touched: [ManagedObjectID: Set<String>] = [:]
    private var touchOrder: [ManagedObjectID] = []
    private var deleted: [ManagedObjectID] = []
    private var deletedSet: Set<ManagedObjectID> = []
    /// Objects this save inserts that a cascade in the same save deletes: never written.
    private var discarded: [ManagedObjectID] = []
    private var tombstones: [ManagedObjectID: [DatabaseValue]] = [:]
    /// Current to-one destinations as this save has set them, so repeated assignments see each other.
    private var toOneState: [ManagedObjectID: [String: ManagedObjectID?]] = [:]
    /// Saved objects known to exist, with their concrete entity.
    private var existing: Set<ManagedObjectID> = []

    init(writer: StoreWriter, db: Database) {
        self.writer = writer
        self.db = db
    }

    private func reject(_ reason: String) -> CoreDataStoreError { .saveRejected(reason: reason) }

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

    private func id(_ reference: ObjectReference) throws -> ManagedObjectID {
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

    private mutating func allocateInserts(_ inserts: [SaveRequest.Insert]) throws {
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
    private mutating func verifyExistence(of request: SaveRequest) throws {
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

    private mutating func confirm(_ ids: Set<ManagedObjectID>) throws {
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
            let found = try Row.fetchAll(db, sql: "SELECT Z_PK, Z_ENT FROM \(table.name) WHERE Z_PK IN (\(StoreSnapshot.placeholders(ids.count)))",
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
    private mutating func touch(_ id: ManagedObjectID, property: String) {
        if touched[id] == nil { touchOrder.append(id); touched[id] = [] }
        guard !inserted.contains(id), touched[id]?.contains(property) == false else { return }
        touched[id]?.insert(property)
    }

    private mutating func touch(_ id: ManagedObjectID, _ properties: Set<String>) {
        if touched[id] == nil { touchOrder.append(id) }
        // Inserted objects record no updated properties: skip building their sets.
        guard !inserted.contains(id) else { if touched[id] == nil { touched[id] = [] }; return }
        touched[id, default: []].formUnion(properties)
    }

    // MARK: - Attributes

    private mutating func writeAttributes(_ values: [String: AttributeValue], of id: ManagedObjectID, isInsert: Bool) throws {
        guard let plan = writer.plans[id.entityName] else { throw CoreDataStoreError.unknownEntity(name: id.entityName) }
        var row = isInsert ? plan.defaultRow : []
        var updates: [String: DatabaseValue] = [:]
        for (name, value) in values {
            guard let slot = plan.attributes[name] else {
                if model.relationship(name, of: id.entityName) != nil {
                    throw CoreDataStoreError.invalidValue(entity: id.entityName, property: name, reason: "it is a relationship; pass it in relationships")
                }
                if let attribute = model.attribute(name, of: id.entityName) { try check(value, for: attribute, entity: id.entityName) }
                throw CoreDataStoreError.unknownProperty(entity: id.entityName, property: name)
            }
            try check(value, for: slot.attribute, entity: id.entityName)
            if isInsert { row[slot.column] = value.databaseValue } else { updates[plan.columns[slot.column]] = value.databaseValue }
        }
        if isInsert {
            for name in plan.required where values[name] == nil {
                throw CoreDataStoreError.invalidValue(entity: id.entityName, property: name, reason: "it is required and has no default value")
            }
            insertRows[id] = row
        } else if !values.isEmpty {
            columnWrites[id, default: [:]].merge(updates) { _, new in new }
            touch(id, Set(values.keys))
        }
    }

    /// Sets one column of an object's row: in the insert row of a new object, else as an update.
    private mutating func setColumn(_ column: String, of id: ManagedObjectID, to value: DatabaseValue) {
        if insertRows[id] != nil, let index = writer.plans[id.entityName]?.columnIndex[column] {
            insertRows[id]?[index] = value
        } else {
            columnWrites[id, default: [:]][column] = value
        }
    }

    private func check(_ value: AttributeValue, for attribute: AttributeDescription, entity: String) throws {
        if attribute.isTransient {
            throw CoreDataStoreError.invalidValue(entity: entity, property: attribute.name, reason: "it is transient and has no column")
        }
        if attribute.isDerived {
            throw CoreDataStoreError.invalidValue(entity: entity, property: attribute.name, reason: "it is derived; Core Data computes it")
        }
        if value == .null && !attribute.isOptional {
            throw CoreDataStoreError.invalidValue(entity: entity, property: attribute.name, reason: "it is required")
        }
        guard value.fits(attribute.type) else {
            throw CoreDataStoreError.invalidValue(entity: entity, property: attribute.name, reason: "\(value) is not a \(attribute.type.modelFileName)")
        }
    }

    static func parseDefault(_ text: String, type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64: Int64(text).map(AttributeValue.integer)
        case .boolean: .boolean(text == "YES" || text == "1" || text.lowercased() == "true")
        case .double, .float: Double(text).map(AttributeValue.double)
        case .decimal: Double(text).map(AttributeValue.decimal)
        case .string: .string(text)
        case .uri: .uri(text)
        case .date: Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .uuid: UUID(uuidString: text).map(AttributeValue.uuid)
        default: nil
        }
    }

    // MARK: - Relationships

    private func relationship(_ name: String, of id: ManagedObjectID) throws -> RelationshipDescription {
        guard let relationship = writer.plans[id.entityName]?.relationships[name]?.relationship else {
            if model.attribute(name, of: id.entityName) != nil {
                throw CoreDataStoreError.invalidValue(entity: id.entityName, property: name, reason: "it is an attribute; pass it in attributes")
            }
            throw CoreDataStoreError.unknownProperty(entity: id.entityName, property: name)
        }
        guard !relationship.isTransient else {
            throw CoreDataStoreError.invalidValue(entity: id.entityName, property: name, reason: "it is transient")
        }
        return relationship
    }

    private func checkDestination(_ id: ManagedObjectID, of relationship: RelationshipDescription, source: ManagedObjectID) throws {
        // Deletes run after every assignment, so a destination deleted by this save is handled by
        // its delete rule (cascade or nullify), as Core Data's delete propagation does.
        guard model.isKind(id.entityName, of: relationship.destinationEntityName) else {
            throw CoreDataStoreError.invalidValue(entity: source.entityName, property: relationship.name,
                                                  reason: "\(id.entityName) is not a \(relationship.destinationEntityName)")
        }
    }

    private mutating func assign(_ value: RelationshipValue, to name: String, of source: ManagedObjectID) throws {
        let relationship = try relationship(name, of: source)
        switch value {
        case .toOne(let reference):
            guard !relationship.isToMany else {
                throw CoreDataStoreError.invalidValue(entity: source.entityName, property: name, reason: "it is to-many; pass .toMany")
            }
            let destination = try reference.map { try id($0) }
            if let destination { try checkDestination(destination, of: relationship, source: source) }
            try setToOne(relationship, of: source, to: destination, maintainInverse: true)
        case .toMany(let references):
            guard relationship.isToMany else {
                throw CoreDataStoreError.invalidValue(entity: source.entityName, property: name, reason: "it is to-one; pass .toOne")
            }
            let members = try references.map { try id($0) }
            for member in members { try checkDestination(member, of: relationship, source: source) }
            try setToMany(relationship, of: source, to: members)
        }
    }

    /// The destination a to-one relationship has now (as this save left it, else as stored).
    private mutating func currentToOne(_ relationship: RelationshipDescription, of source: ManagedObjectID) throws -> ManagedObjectID? {
        if let state = toOneState[source]?[relationship.name] { return state }
        guard !inserted.contains(source),
              case .toOne(let column, let entityColumn)? = writer.plans[source.entityName]?.relationships[relationship.name]?.storage,
              let table = layout.table(for: source.entityName, model: model)
        else { return nil }
        let row = try Row.fetchOne(db, sql: "SELECT \(column), \(entityColumn ?? "NULL") FROM \(table.name) WHERE Z_PK = ?",
                                   arguments: [source.primaryKey])
        guard let key: Int64 = row?[0] else { return nil }
        let entity = (row?[1] as Int?).flatMap { number in layout.entityNumbers.first { $0.value == number }?.key }
            ?? relationship.destinationEntityName
        return ManagedObjectID(storeUUID: writer.storeUUID, entityName: entity, primaryKey: key)
    }

    private mutating func setToOne(
        _ relationship: RelationshipDescription, of source: ManagedObjectID, to destination: ManagedObjectID?, maintainInverse: Bool
    ) throws {
        guard case .toOne(let column, let entityColumn)? = writer.plans[source.entityName]?.relationships[relationship.name]?.storage else {
            throw reject("\(source.entityName).\(relationship.name) has no column")
        }
        let previous = try currentToOne(relationship, of: source)
        setColumn(column, of: source, to: destination.map { $0.primaryKey.databaseValue } ?? .null)
        if let entityColumn {
            setColumn(entityColumn, of: source, to: destination.flatMap { layout.entityNumbers[$0.entityName] }.map { Int64($0).databaseValue } ?? .null)
        }
        toOneState[source, default: [:]][relationship.name] = .some(destination)
        touch(source, property: relationship.name)
        guard maintainInverse, previous != destination,
              let inverse = writer.plans[source.entityName]?.relationships[relationship.name]?.inverse ?? model.inverse(of: relationship)
        else { return }
        if inverse.isToMany {
            // The inverse to-many is derived from this column; both owners changed.
            for owner in [previous, destination].compactMap({ $0 }) where !deletedSet.contains(owner) { touch(owner, property: inverse.name) }
            if inverse.isOrdered, let destination, case .toManyViaInverse(_, _, let order?) = layout.storage(of: inverse.name, entity: destination.entityName, model: model) {
                setColumn(order, of: source, to: try nextOrder(in: inverse, of: destination).databaseValue)
            }
        } else {
            // One-to-one: the old partner lets go, the new partner points back and drops its old partner.
            if let previous, !deletedSet.contains(previous) {
                try setToOne(inverse, of: previous, to: nil, maintainInverse: false)
            }
            if let destination {
                if let partner = try currentToOne(inverse, of: destination), partner != source, !deletedSet.contains(partner) {
                    try setToOne(relationship, of: partner, to: nil, maintainInverse: false)
                }
                try setToOne(inverse, of: destination, to: source, maintainInverse: false)
            }
        }
    }

    private func nextOrder(in relationship: RelationshipDescription, of owner: ManagedObjectID) throws -> Int64 {
        guard case .toManyViaInverse(let table, let column, let order?) = layout.storage(of: relationship.name, entity: owner.entityName, model: model) else { return 0 }
        return (try Int64.fetchOne(db, sql: "SELECT MAX(\(order)) FROM \(table) WHERE \(column) = ?", arguments: [owner.primaryKey]) ?? 0) + 1
    }

    /// The members a to-many relationship has in the store (before this save's changes).
    private func storedMembers(_ relationship: RelationshipDescription, of owner: ManagedObjectID) throws -> [ManagedObjectID] {
        guard !inserted.contains(owner) else { return [] }
        let names = Dictionary(layout.entityNumbers.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let sql: String
        switch layout.storage(of: relationship.name, entity: owner.entityName, model: model) {
        case .toManyViaInverse(let table, let column, _):
            sql = "SELECT Z_PK, Z_ENT FROM \(table) WHERE \(column) = ?"
        case .toManyViaJoin(let join, let column, let other, _):
            guard let table = layout.table(for: relationship.destinationEntityName, model: model) else { return [] }
            sql = "SELECT t.Z_PK, t.Z_ENT FROM \(join) j JOIN \(table.name) t ON t.Z_PK = j.\(other) WHERE j.\(column) = ?"
        default:
            return []
        }
        return try Row.fetchAll(db, sql: sql, arguments: [owner.primaryKey]).compactMap { row in
            guard let entity = names[row[1] as Int] else { return nil }
            return ManagedObjectID(storeUUID: writer.storeUUID, entityName: entity, primaryKey: row[0])
        }
    }

    /// The members a to-many relationship has now: stored rows as this save has reassigned them.
    /// (Join-table changes are written immediately, so only inverse foreign keys need merging.)
    private func currentMembers(_ relationship: RelationshipDescription, of owner: ManagedObjectID) throws -> [ManagedObjectID] {
        let stored = try storedMembers(relationship, of: owner)
        guard let inverse = model.inverse(of: relationship), !inverse.isToMany else { return stored }
        var members = stored.filter { member in
            guard let pending = toOneState[member]?[inverse.name] else { return true }
            return pending == owner
        }
        let known = Set(members)
        for (member, state) in toOneState where state[inverse.name] == .some(owner) && !known.contains(member) {
            members.append(member)
        }
        return members.sorted()
    }

    private mutating func setToMany(_ relationship: RelationshipDescription, of owner: ManagedObjectID, to members: [ManagedObjectID]) throws {
        guard let inverse = model.inverse(of: relationship) else {
            throw reject("\(owner.entityName).\(relationship.name) has no inverse relationship; Core Data stores a to-many only through its inverse")
        }
        let old = try currentMembers(relationship, of: owner)
        let newSet = Set(members)
        touch(owner, [relationship.name])
        switch layout.storage(of: relationship.name, entity: owner.entityName, model: model) {
        case .toManyViaInverse(_, _, let orderColumn):
            for member in old where !newSet.contains(member) {
                try setToOne(inverse, of: member, to: nil, maintainInverse: false)
                if let orderColumn { setColumn(orderColumn, of: member, to: .null) }
            }
            for (position, member) in members.enumerated() {
                if let previousOwner = try currentToOne(inverse, of: member), previousOwner != owner {
                    touch(previousOwner, [relationship.name])
                }
                try setToOne(inverse, of: member, to: owner, maintainInverse: false)
                if let orderColumn { setColumn(orderColumn, of: member, to: Int64(position + 1).databaseValue) }
            }
        case .toManyViaJoin(let join, let column, let other, let orderColumn):
            try db.execute(sql: "DELETE FROM \(join) WHERE \(column) = ?", arguments: [owner.primaryKey])
            if other == StoreLayout.reflexiveColumn {
                // A relationship that is its own inverse keeps each pair in both directions, as Core Data does.
                try db.execute(sql: "DELETE FROM \(join) WHERE \(other) = ?", arguments: [owner.primaryKey])
                for member in members {
                    try db.execute(sql: "INSERT OR REPLACE INTO \(join) (\(column), \(other)) VALUES (?, ?), (?, ?)",
                                   arguments: [owner.primaryKey, member.primaryKey, member.primaryKey, owner.primaryKey])
                }
                for member in Set(old).symmetricDifference(newSet) { touch(member, [inverse.name]) }
                return
            }
            for (position, member) in members.enumerated() {
                if let orderColumn {
                    try db.execute(sql: "INSERT OR REPLACE INTO \(join) (\(column), \(other), \(orderColumn)) VALUES (?, ?, ?)",
                                   arguments: [owner.primaryKey, member.primaryKey, position + 1])
                } else {
                    try db.execute(sql: "INSERT OR REPLACE INTO \(join) (\(column), \(other)) VALUES (?, ?)",
                                   arguments: [owner.primaryKey, member.primaryKey])
                }
            }
            for member in Set(old).symmetricDifference(newSet) { touch(member, [inverse.name]) }
        default:
            throw reject("\(owner.entityName).\(relationship.name) has no storage")
        }
    }

    // MARK: - Deletes

    private mutating func delete(_ root: ManagedObjectID) throws {
        var queue = [root]
        while let id = queue.popLast() {
            guard !deletedSet.contains(id) else { continue }
            deletedSet.insert(id)
            if inserted.contains(id) {
                guard id != root else { throw reject("\(id.uriRepresentation) is inserted by this save; it cannot also be deleted") }
                discarded.append(id) // reached by a cascade: Core Data never saves it
            } else {
                try confirm([id])
                deleted.append(id)
                try captureTombstone(of: id)
            }
            for relationship in model.allRelationships(of: id.entityName) where !relationship.isTransient {
                let related: [ManagedObjectID] = relationship.isToMany
                    ? try currentMembers(relationship, of: id)
                    : [try currentToOne(relationship, of: id)].compactMap { $0 }
                let live = related.filter { !deletedSet.contains($0) }
                switch relationship.deleteRule {
                case .deny where !live.isEmpty:
                    throw reject("\(id.uriRepresentation) cannot be deleted: its \(relationship.name) relationship denies deletion while it has objects")
                case .cascade:
                    queue.append(contentsOf: live)
                case .nullify:
                    guard let inverse = model.inverse(of: relationship) else { break }
                    for other in live {
                        if inverse.isToMany {
                            touch(other, [inverse.name])
                        } else {
                            try setToOne(inverse, of: other, to: nil, maintainInverse: false)
                        }
                    }
                default:
                    break
                }
                if case .toManyViaJoin(let join, let column, let other, _) = layout.storage(of: relationship.name, entity: id.entityName, model: model) {
                    try db.execute(sql: "DELETE FROM \(join) WHERE \(column) = ?", arguments: [id.primaryKey])
                    if other == StoreLayout.reflexiveColumn {
                        try db.execute(sql: "DELETE FROM \(join) WHERE \(other) = ?", arguments: [id.primaryKey])
                    }
                }
            }
        }
    }

    private mutating func captureTombstone(of id: ManagedObjectID) throws {
        let attributes = model.tombstoneAttributes(of: id.entityName)
        guard writer.tracksHistory, !attributes.isEmpty, writer.tombstoneColumnCount > 0,
              let table = layout.table(for: id.entityName, model: model) else { return }
        let columns = attributes.compactMap { attribute -> String? in
            guard case .attribute(let names) = layout.storage(of: attribute.name, entity: id.entityName, model: model) else { return nil }
            return names.first
        }
        guard let row = try Row.fetchOne(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table.name) WHERE Z_PK = ?", arguments: [id.primaryKey]) else { return }
        tombstones[id] = (0..<columns.count).map { row[$0] as DatabaseValue }
    }

    // MARK: - Writing

    private mutating func writeRows() throws {
        // Deleted rows go first so their primary keys cannot collide with anything written after.
        var deletedByTable: [String: [Int64]] = [:]
        for id in deleted {
            if let table = layout.table(for: id.entityName, model: model) { deletedByTable[table.name, default: []].append(id.primaryKey) }
        }
        for (table, keys) in deletedByTable {
            for start in stride(from: 0, to: keys.count, by: StoreSnapshot.batchSize) {
                let chunk = Array(keys[start..<min(start + StoreSnapshot.batchSize, keys.count)])
                try db.execute(sql: "DELETE FROM \(table) WHERE Z_PK IN (\(StoreSnapshot.placeholders(chunk.count)))", arguments: StatementArguments(chunk))
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

    private func intern(_ text: String?) throws -> Int64? {
        guard let text else { return nil }
        if let key = try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?", arguments: [text]) { return key }
        let key = try allocate(16003, count: 1)
        try db.execute(sql: "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, 16003, NULL, ?)", arguments: [key, text])
        return key
    }

    /// Hands out `count` primary keys of a history entity through `Z_MAX`, as Core Data does.
    private func allocate(_ entity: Int, count: Int) throws -> Int64 {
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

    private mutating func writeHistory(_ request: SaveRequest) throws -> Int64? {
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
