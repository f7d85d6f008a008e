extension ManagedObjectModel {
    /// Infers a model from a store's tables when neither `Z_MODELCACHE` nor a model file is available.
    ///
    /// This is the last resort and it is approximate: property names come from column names in lower
    /// case (`ZFIRSTNAME` → `firstname`), every column is attributed to its hierarchy's root entity, and
    /// foreign keys whose destination cannot be told (no `Z<n>_` column) stay integer attributes.
    /// The result's `source` is `.schema` so callers can say so.
    init(inferringFrom catalog: StoreCatalog) throws(CoreDataStoreError) {
        let rows = catalog.entityRows
        let nameByNumber = Dictionary(rows.map { ($0.entityNumber, $0.name) }, uniquingKeysWith: { first, _ in first })
        let fixed: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        var entities: [EntityDescription] = []
        for row in rows {
            let parent = row.superNumber == 0 ? nil : nameByNumber[row.superNumber]
            var attributes: [AttributeDescription] = []
            var relationships: [RelationshipDescription] = []
            if parent == nil, let columns = catalog.tables["Z" + row.name.uppercased()] {
                let entityColumns = Dictionary(
                    columns.compactMap { column -> (String, Int)? in
                        // Z<n>_<REL>: the concrete entity of the row a to-one points at.
                        let parts = column.name.dropFirst().split(separator: "_", maxSplits: 1)
                        guard column.name.hasPrefix("Z"), parts.count == 2, let number = Int(parts[0]) else { return nil }
                        return ("Z" + parts[1], number)
                    },
                    uniquingKeysWith: { first, _ in first })
                for column in columns where !fixed.contains(column.name) && column.name.hasPrefix("Z") && !column.name.hasPrefix("Z_") {
                    if column.name.dropFirst().first?.isNumber == true { continue } // Z<n>_ companion columns
                    let name = column.name.dropFirst().lowercased()
                    if let number = entityColumns[column.name], let destination = nameByNumber[number] {
                        relationships.append(RelationshipDescription(name: name, destinationEntityName: destination))
                        continue
                    }
                    let type: AttributeType = switch column.type.uppercased() {
                    case "INTEGER": .integer64
                    case "FLOAT": .double
                    case "TIMESTAMP": .date
                    case "DECIMAL": .decimal
                    case "VARCHAR": .string
                    default: .binaryData
                    }
                    attributes.append(AttributeDescription(name: name, type: type))
                }
            }
            entities.append(EntityDescription(name: row.name, superentityName: parent,
                                              attributes: attributes, relationships: relationships))
        }
        try self.init(entities: entities, source: .schema)
    }
}
