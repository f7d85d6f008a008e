import CoreDataStore
import Foundation
import GRDB
import SQLiteFiles
import GRDBSQLite

/// Deletes, with the model's delete rules, and the tombstones history keeps.
extension SaveOperation {
    mutating func delete(_ root: ManagedObjectID) throws {
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

    mutating func captureTombstone(of id: ManagedObjectID) throws {
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
}
