import CoreDataStore
import Foundation
import GRDB
import SQLiteFiles
import GRDBSQLite

/// Relationships: to-one foreign keys, to-many join tables and ordering, inverses kept in step.
extension SaveOperation {
    func relationship(_ name: String, of id: ManagedObjectID) throws -> RelationshipDescription {
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

    func checkDestination(_ id: ManagedObjectID, of relationship: RelationshipDescription, source: ManagedObjectID) throws {
        // Deletes run after every assignment, so a destination deleted by this save is handled by
        // its delete rule (cascade or nullify), as Core Data's delete propagation does.
        guard model.isKind(id.entityName, of: relationship.destinationEntityName) else {
            throw CoreDataStoreError.invalidValue(entity: source.entityName, property: relationship.name,
                                                  reason: "\(id.entityName) is not a \(relationship.destinationEntityName)")
        }
    }

    mutating func assign(_ value: RelationshipValue, to name: String, of source: ManagedObjectID) throws {
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
    mutating func currentToOne(_ relationship: RelationshipDescription, of source: ManagedObjectID) throws -> ManagedObjectID? {
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

    mutating func setToOne(
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

    func nextOrder(in relationship: RelationshipDescription, of owner: ManagedObjectID) throws -> Int64 {
        guard case .toManyViaInverse(let table, let column, let order?) = layout.storage(of: relationship.name, entity: owner.entityName, model: model) else { return 0 }
        return (try Int64.fetchOne(db, sql: "SELECT MAX(\(order)) FROM \(table) WHERE \(column) = ?", arguments: [owner.primaryKey]) ?? 0) + 1
    }

    /// The members a to-many relationship has in the store (before this save's changes).
    func storedMembers(_ relationship: RelationshipDescription, of owner: ManagedObjectID) throws -> [ManagedObjectID] {
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
    func currentMembers(_ relationship: RelationshipDescription, of owner: ManagedObjectID) throws -> [ManagedObjectID] {
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

    mutating func setToMany(_ relationship: RelationshipDescription, of owner: ManagedObjectID, to members: [ManagedObjectID]) throws {
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
}
