import GRDB

/// Precomputed reading plan for one entity table: the select list, and for each concrete entity
/// number which column holds which property. Built once per store, used for every batch.
struct TableReader: Sendable {
    struct AttributeSlot: Sendable {
        var key: String
        var type: AttributeType
        var index: Int
    }

    struct ToOneSlot: Sendable {
        var name: String
        var keyIndex: Int
        var entityIndex: Int?
        var destination: String
    }

    struct ToManySlot: Sendable {
        var name: String
        var destination: String
        /// The table the keys come from, for messages.
        var table: String
        /// The query that returns `(owner pk, destination pk, destination Z_ENT)` rows, ordered;
        /// `%@` is replaced by the list of placeholders.
        var sqlTemplate: String
    }

    let tableName: String
    /// Key tables shared by the snapshots of each entity number.
    let attributeKeys: [Int: NamedValues<AttributeValue>.Keys]
    let toOneKeys: [Int: NamedValues<ManagedObjectID>.Keys]
    let selectList: String
    let attributeSlots: [Int: [AttributeSlot]]
    let toOneSlots: [Int: [ToOneSlot]]
    let toManySlots: [Int: [ToManySlot]]
    let entityNumbers: [Int]

    init(table: StoreLayout.Table, existingColumns: Set<String>, model: ManagedObjectModel, layout: StoreLayout) {
        tableName = table.name
        let columns = table.columns.map(\.name).filter(existingColumns.contains)
        selectList = (["Z_PK", "Z_ENT", "Z_OPT"] + columns).joined(separator: ", ")
        let position = Dictionary(columns.enumerated().map { ($1, $0 + 3) }, uniquingKeysWith: { first, _ in first })
        var attributes: [Int: [AttributeSlot]] = [:]
        var toOne: [Int: [ToOneSlot]] = [:]
        var toMany: [Int: [ToManySlot]] = [:]
        var numbers: [Int] = []
        for entity in model.hierarchy(from: table.rootEntity) {
            guard let number = layout.entityNumbers[entity] else { continue }
            numbers.append(number)
            for attribute in model.allAttributes(of: entity) where attribute.isStored {
                guard case .attribute(let names) = layout.storage(of: attribute.name, entity: entity, model: model) else { continue }
                if attribute.type == .composite {
                    for (element, column) in zip(attribute.compositeElements, names) {
                        guard let index = position[column] else { continue }
                        attributes[number, default: []].append(
                            AttributeSlot(key: attribute.name + "." + element.name, type: element.type, index: index))
                    }
                } else if let column = names.first, let index = position[column] {
                    attributes[number, default: []].append(AttributeSlot(key: attribute.name, type: attribute.type, index: index))
                }
            }
            for relationship in model.allRelationships(of: entity) where !relationship.isTransient {
                switch layout.storage(of: relationship.name, entity: entity, model: model) {
                case .toOne(let column, let entityColumn):
                    guard let keyIndex = position[column] else { continue }
                    toOne[number, default: []].append(ToOneSlot(
                        name: relationship.name, keyIndex: keyIndex, entityIndex: entityColumn.flatMap { position[$0] },
                        destination: relationship.destinationEntityName))
                case .toManyViaInverse(let destinationTable, let column, let orderColumn):
                    let order = orderColumn.map { "\($0), Z_PK" } ?? "Z_PK"
                    toMany[number, default: []].append(ToManySlot(
                        name: relationship.name, destination: relationship.destinationEntityName, table: destinationTable,
                        sqlTemplate: "SELECT \(column), Z_PK, Z_ENT FROM \(destinationTable) WHERE \(column) IN (%@) ORDER BY \(column), \(order)"))
                case .toManyViaJoin(let joinTable, let column, let otherColumn, let orderColumn):
                    guard let destinationTable = layout.table(for: relationship.destinationEntityName, model: model)?.name else { continue }
                    let order = orderColumn.map { "j.\($0), j.\(otherColumn)" } ?? "j.\(otherColumn)"
                    toMany[number, default: []].append(ToManySlot(
                        name: relationship.name, destination: relationship.destinationEntityName, table: joinTable,
                        sqlTemplate: "SELECT j.\(column), j.\(otherColumn), t.Z_ENT FROM \(joinTable) j JOIN \(destinationTable) t ON t.Z_PK = j.\(otherColumn) WHERE j.\(column) IN (%@) ORDER BY j.\(column), \(order)"))
                case .attribute, .none:
                    continue
                }
            }
        }
        attributeSlots = attributes
        toOneSlots = toOne
        attributeKeys = attributes.mapValues { .init($0.map(\.key)) }
        toOneKeys = toOne.mapValues { .init($0.map(\.name)) }
        toManySlots = toMany
        entityNumbers = numbers
    }
}
