import CoreDataStore
import GRDB

/// What the writer needs to insert rows of one entity, computed once per writer: the table's columns,
/// where each attribute goes, default values, required attributes, and relationship columns.
/// Saves then fill arrays by index instead of walking the model for every object.
struct EntityWritePlan: Sendable {
    struct AttributeSlot: Sendable {
        var attribute: AttributeDescription
        var column: Int
    }

    /// One relationship with what saves need of it, resolved once.
    struct RelationshipSlot: Sendable {
        var relationship: RelationshipDescription
        var inverse: RelationshipDescription?
        var storage: StoreLayout.PropertyStorage
    }

    let table: String
    let rootEntity: String
    let entityNumber: Int64
    let columns: [String]
    let columnIndex: [String: Int]
    let attributes: [String: AttributeSlot]
    let relationships: [String: RelationshipSlot]
    /// The row a fresh insert starts from: NULLs and default values.
    let defaultRow: [DatabaseValue]
    /// Attributes an insert must give (not optional, no default, not derived).
    let required: [String]
    /// `INSERT INTO <table> (Z_PK, Z_ENT, Z_OPT, …) VALUES (…)`.
    let insertSQL: String

    init?(entity: String, model: ManagedObjectModel, layout: StoreLayout) {
        guard let table = layout.table(for: entity, model: model), let number = layout.entityNumbers[entity] else { return nil }
        self.table = table.name
        rootEntity = table.rootEntity
        entityNumber = Int64(number)
        columns = table.columns.map(\.name)
        columnIndex = Dictionary(columns.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var slots: [String: AttributeSlot] = [:]
        var row = [DatabaseValue](repeating: .null, count: columns.count)
        var required: [String] = []
        for attribute in model.allAttributes(of: entity) where attribute.isStored {
            guard case .attribute(let names) = layout.storage(of: attribute.name, entity: entity, model: model),
                  let name = names.first, let column = columnIndex[name] else { continue }
            slots[attribute.name] = AttributeSlot(attribute: attribute, column: column)
            guard !attribute.isDerived else { continue }
            let value = attribute.defaultValue.flatMap { SaveOperation.parseDefault($0, type: attribute.type) } ?? .null
            row[column] = value.databaseValue
            if value == .null && !attribute.isOptional { required.append(attribute.name) }
        }
        attributes = slots
        var relationshipSlots: [String: RelationshipSlot] = [:]
        for relationship in model.allRelationships(of: entity) {
            relationshipSlots[relationship.name] = RelationshipSlot(
                relationship: relationship, inverse: model.inverse(of: relationship),
                storage: layout.storage(of: relationship.name, entity: entity, model: model))
        }
        relationships = relationshipSlots
        defaultRow = row
        self.required = required
        insertSQL = "INSERT INTO \(table.name) (Z_PK, Z_ENT, Z_OPT\(columns.map { ", " + $0 }.joined())) VALUES (?, ?, 1\(String(repeating: ", ?", count: columns.count)))"
    }

    static func plans(model: ManagedObjectModel, layout: StoreLayout) -> [String: EntityWritePlan] {
        var plans: [String: EntityWritePlan] = [:]
        for entity in model.entities { plans[entity.name] = EntityWritePlan(entity: entity.name, model: model, layout: layout) }
        return plans
    }
}
