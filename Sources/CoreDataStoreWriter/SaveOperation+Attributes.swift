import CoreDataStore
import Foundation
import GRDB
import SQLiteFiles
import GRDBSQLite

/// Attribute values: checked against the model, written to their columns.
extension SaveOperation {
    mutating func writeAttributes(_ values: [String: AttributeValue], of id: ManagedObjectID, isInsert: Bool) throws {
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
    mutating func setColumn(_ column: String, of id: ManagedObjectID, to value: DatabaseValue) {
        if insertRows[id] != nil, let index = writer.plans[id.entityName]?.columnIndex[column] {
            insertRows[id]?[index] = value
        } else {
            columnWrites[id, default: [:]][column] = value
        }
    }

    func check(_ value: AttributeValue, for attribute: AttributeDescription, entity: String) throws {
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
}
