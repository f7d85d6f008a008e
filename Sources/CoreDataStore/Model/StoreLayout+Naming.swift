

/// How Core Data names tables and columns, and finds an existing file's join tables and ordering columns.
extension StoreLayout {
    /// `Z` + the upper-cased name: Core Data's column stem for a property or entity.
    static func columnStem(_ name: String) -> String { name.uppercased() }

    static func table(root: String, model: ManagedObjectModel, entityNumbers: [String: Int]) -> Table {
        var columns: [(bucket: Int, column: Column)] = []
        for name in model.hierarchy(from: root) {
            guard let entity = model.entity(named: name) else { continue }
            for attribute in entity.attributes where attribute.isStored {
                if attribute.type == .composite {
                    for element in attribute.compositeElements {
                        guard let type = element.type.columnType else { continue }
                        columns.append((bucket(element.type), Column(
                            name: "Z" + columnStem(attribute.name) + "_" + columnStem(element.name), sqlType: type,
                            content: .attribute(entity: name, name: attribute.name, type: element.type, element: element.name))))
                    }
                } else if let type = attribute.type.columnType {
                    columns.append((bucket(attribute.type), Column(
                        name: "Z" + columnStem(attribute.name), sqlType: type,
                        content: .attribute(entity: name, name: attribute.name, type: attribute.type, element: nil))))
                }
            }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isTransient {
                columns.append((0, Column(name: "Z" + columnStem(relationship.name), sqlType: "INTEGER",
                                          content: .foreignKey(entity: name, relationship: relationship.name))))
                let destination = relationship.destinationEntityName
                if !model.subentities(of: destination).isEmpty, let number = entityNumbers[destination] {
                    columns.append((0, Column(name: "Z\(number)_" + columnStem(relationship.name), sqlType: "INTEGER",
                                              content: .foreignEntity(entity: name, relationship: relationship.name))))
                }
                if let inverse = model.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    columns.append((0, Column(name: "Z_FOK_" + columnStem(relationship.name), sqlType: "INTEGER",
                                              content: .foreignOrder(entity: name, relationship: relationship.name))))
                }
            }
        }
        // Stable sort into type buckets, then give repeated names (same property name on sibling
        // sub-entities) the numeric suffixes Core Data uses.
        var sorted = columns.enumerated().sorted { ($0.element.bucket, $0.offset) < ($1.element.bucket, $1.offset) }.map(\.element.column)
        var seen: [String: Int] = [:]
        for index in sorted.indices {
            let base = sorted[index].name
            if let count = seen[base] {
                sorted[index].name = base + String(count)
                seen[base] = count + 1
            } else {
                seen[base] = 1
            }
        }
        return Table(name: "Z" + columnStem(root), rootEntity: root, columns: sorted)
    }

    /// Column buckets: INTEGER < FLOAT/TIMESTAMP < DECIMAL < VARCHAR < BLOB < transformable BLOB.
    static func bucket(_ type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: 0
        case .double, .float, .date: 1
        case .decimal: 2
        case .string, .uri: 3
        case .binaryData, .uuid: 4
        case .transformable: 5
        case .undefined, .objectID, .composite: 6
        }
    }

    static func joinTable(
        _ entity: String, _ relationship: RelationshipDescription, _ inverseOwner: String, _ inverse: RelationshipDescription,
        entityNumbers: [String: Int]
    ) -> JoinTable {
        // Side a is the entity whose name sorts first (ties: the relationship whose name sorts first).
        let mineFirst = (entity, relationship.name) <= (inverseOwner, inverse.name)
        let (aEntity, aRel, bEntity, bRel) = mineFirst
            ? (entity, relationship, inverseOwner, inverse) : (inverseOwner, inverse, entity, relationship)
        let a = entityNumbers[aEntity] ?? 0
        let b = entityNumbers[bEntity] ?? 0
        let column = "Z_\(a)" + columnStem(bRel.name)
        let reflexive = isReflexive(entity, relationship, inverseOwner, inverse)
        let inverseColumn = reflexive ? reflexiveColumn : "Z_\(b)" + columnStem(aRel.name)
        return JoinTable(
            name: "Z_\(a)" + columnStem(aRel.name),
            entity: aEntity, relationship: aRel.name, inverseEntity: bEntity, inverseRelationship: bRel.name,
            column: column, inverseColumn: inverseColumn,
            orderColumn: aRel.isOrdered && !reflexive ? orderColumn(for: inverseColumn) : nil,
            inverseOrderColumn: bRel.isOrdered && !reflexive ? orderColumn(for: column) : nil)
    }

    /// Whether a relationship is its own inverse (`friends` ↔ `friends`): one table, both directions.
    static func isReflexive(
        _ entity: String, _ relationship: RelationshipDescription, _ inverseOwner: String, _ inverse: RelationshipDescription
    ) -> Bool {
        entity == inverseOwner && relationship.name == inverse.name
    }

    /// `Z_FOK_34ASSETS` for the key column `Z_34ASSETS`.
    static func orderColumn(for keyColumn: String) -> String {
        "Z_FOK_" + keyColumn.dropFirst(2)
    }

    /// Finds the file's table and columns for a derived join table. Real files name the table after
    /// either side and add digits to column names that collide across tables (`Z_34REPRESENTATIVEASSETS1`),
    /// so each candidate is matched by its columns, exact names first.
    static func locate(_ join: JoinTable, in schema: [String: [String]], reflexive: Bool, entityNumbers: [String: Int]) -> JoinTable? {
        let a = entityNumbers[join.entity] ?? 0
        let b = entityNumbers[join.inverseEntity] ?? 0
        let stems = ["Z_\(a)" + columnStem(join.relationship), "Z_\(b)" + columnStem(join.inverseRelationship)]
        let candidates = stems.flatMap { stem in
            schema.keys.filter { $0 == stem || hasDigitSuffix($0, after: stem) }.sorted { ($0.count, $0) < ($1.count, $1) }
        }
        var seen: Set<String> = []
        for name in candidates where seen.insert(name).inserted {
            guard let columns = schema[name] else { continue }
            let keys = columns.filter { !$0.hasPrefix("Z_FOK_") }
            guard let column = match(stem: "Z_\(a)" + columnStem(join.inverseRelationship), in: keys),
                  let inverseColumn = reflexive ? keys.first(where: { $0 == reflexiveColumn }) : match(stem: "Z_\(b)" + columnStem(join.relationship), in: keys),
                  column != inverseColumn
            else { continue }
            var found = join
            found.name = name
            found.column = column
            found.inverseColumn = inverseColumn
            let order = orderColumn(for: inverseColumn), inverseOrder = orderColumn(for: column)
            found.orderColumn = join.orderColumn != nil && columns.contains(order) ? order : nil
            found.inverseOrderColumn = join.inverseOrderColumn != nil && columns.contains(inverseOrder) ? inverseOrder : nil
            return found
        }
        return nil
    }

    /// The column named `stem`, else the one column named `stem` plus digits.
    static func match(stem: String, in columns: [String]) -> String? {
        if columns.contains(stem) { return stem }
        let suffixed = columns.filter { hasDigitSuffix($0, after: stem) }
        return suffixed.count == 1 ? suffixed[0] : nil
    }

    static func hasDigitSuffix(_ name: String, after stem: String) -> Bool {
        name.count > stem.count && name.hasPrefix(stem) && name.dropFirst(stem.count).allSatisfy { $0.isASCII && $0.isNumber }
    }
}
