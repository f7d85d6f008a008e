/// How a model maps onto SQLite: one table per root entity, its columns in Core Data's order, join
/// tables for many-to-many relationships, and entity numbers.
///
/// The same layout drives the reader (which column holds which property) and the writer (the DDL it
/// emits), so the two can never disagree. Column order follows what Apple-written stores show: the
/// hierarchy root first, then each sub-entity; within an entity attributes by name, then to-one
/// foreign keys by name; then a stable sort into SQL type buckets.
///
/// A layout for an existing file is laid over that file's schema (``init(model:entityNumbers:schema:)``):
/// join-table and ordering-column names follow no rule that predicts every real store, so they are
/// looked up in `sqlite_master`, never trusted from the derivation.
public struct StoreLayout: Sendable {
    /// One column of an entity table.
    public struct Column: Sendable, Hashable {
        /// What a column holds.
        public enum Content: Sendable, Hashable {
            /// An attribute's value (`element` names the leaf of a composite attribute).
            case attribute(entity: String, name: String, type: AttributeType, element: String?)
            /// A to-one relationship's destination primary key.
            case foreignKey(entity: String, relationship: String)
            /// The destination's concrete entity number (`Z<n>_<REL>`), when the destination has sub-entities.
            case foreignEntity(entity: String, relationship: String)
            /// The position of this row in an ordered to-many relationship (`Z_FOK_<REL>`).
            case foreignOrder(entity: String, relationship: String)
        }

        /// The column name, e.g. `ZTITLE`.
        public var name: String
        /// The declared SQL type.
        public var sqlType: String
        /// What the column holds.
        public var content: Content
    }

    /// The table of one entity hierarchy.
    public struct Table: Sendable {
        /// The table name, e.g. `ZBOOK`.
        public var name: String
        /// The root entity of the hierarchy.
        public var rootEntity: String
        /// Columns after `Z_PK, Z_ENT, Z_OPT`, in DDL order.
        public var columns: [Column]
    }

    /// A many-to-many join table.
    ///
    /// Real stores show `Z_26ASSETS ( Z_26ALBUMS, Z_34ASSETS, Z_FOK_34ASSETS )` for Album #26 `assets` ↔
    /// GenericAsset #34 `albums`: each key column is `Z_<n>` + the name of the relationship that points
    /// at entity *n*, and an ordered relationship's order sits in `Z_FOK_` + its destination's key column
    /// less the `Z_`. A relationship that is its own inverse keeps the other side in `REFLEXIVE`.
    public struct JoinTable: Sendable {
        /// The table name, e.g. `Z_1TAGS`.
        public var name: String
        /// The entity and relationship on side *a* (whose name sorts first).
        public var entity: String
        /// The relationship on side *a*.
        public var relationship: String
        /// The entity on side *b*.
        public var inverseEntity: String
        /// The relationship on side *b*.
        public var inverseRelationship: String
        /// The column holding side *a*'s primary keys.
        public var column: String
        /// The column holding side *b*'s primary keys.
        public var inverseColumn: String
        /// The order of side *b*'s objects within side *a*'s relationship, when it is ordered.
        public var orderColumn: String?
        /// The order of side *a*'s objects within side *b*'s relationship, when it is ordered.
        public var inverseOrderColumn: String?
    }

    /// Where a property's data lives.
    public enum PropertyStorage: Sendable, Hashable {
        /// An attribute column (composite attributes: one column per element).
        case attribute(columns: [String])
        /// A to-one relationship: the foreign-key column, and the entity column when there is one.
        case toOne(column: String, entityColumn: String?)
        /// A to-many relationship whose inverse to-one lives on the destination table.
        case toManyViaInverse(table: String, column: String, orderColumn: String?)
        /// A many-to-many relationship through a join table; `column` holds this side's keys.
        case toManyViaJoin(table: String, column: String, otherColumn: String, orderColumn: String?)
        /// A property with no storage (transient, or a to-many with no inverse).
        case none
    }

    /// Entity numbers (`Z_ENT`).
    public let entityNumbers: [String: Int]
    /// Entity tables by root entity name.
    public let tables: [String: Table]
    /// Join tables, by name.
    public let joinTables: [String: JoinTable]
    /// The number of `ZTOMBSTONE<n>` columns `ACHANGE` needs.
    public let tombstoneColumnCount: Int
    /// Relationships the schema given to ``init(model:entityNumbers:schema:)`` has no storage for,
    /// as `Entity.relationship`: they read as empty rather than failing every read.
    public let unresolvedRelationships: [String]
    private let storage: [String: [String: PropertyStorage]]

    /// Lays out a model with Core Data's own entity numbering.
    public init(model: ManagedObjectModel) {
        self.init(model: model, entityNumbers: model.entityNumbers)
    }

    /// Lays out a model with given entity numbers (an existing store's `Z_PRIMARYKEY`).
    ///
    /// - Parameters:
    ///   - model: The model whose entities are laid out.
    ///   - entityNumbers: Each entity's `Z_ENT`, as the store's `Z_PRIMARYKEY` gives them.
    ///   - schema: The existing file's tables and their columns. When given, join tables,
    ///     their key and ordering columns, and ordering columns of entity tables are taken from it;
    ///     a relationship it has no storage for is listed in ``unresolvedRelationships``.
    public init(model: ManagedObjectModel, entityNumbers: [String: Int], schema: [String: [String]]? = nil) {
        self.entityNumbers = entityNumbers
        var tables: [String: Table] = [:]
        var storage: [String: [String: PropertyStorage]] = [:]
        for root in model.entities where root.superentityName == nil {
            let table = Self.table(root: root.name, model: model, entityNumbers: entityNumbers)
            tables[root.name] = table
            for column in table.columns {
                switch column.content {
                case .attribute(let entity, let name, _, _):
                    if case .attribute(let existing)? = storage[entity]?[name] {
                        storage[entity, default: [:]][name] = .attribute(columns: existing + [column.name])
                    } else {
                        storage[entity, default: [:]][name] = .attribute(columns: [column.name])
                    }
                case .foreignKey(let entity, let relationship):
                    storage[entity, default: [:]][relationship] = .toOne(column: column.name, entityColumn: nil)
                case .foreignEntity(let entity, let relationship):
                    if case .toOne(let key, _)? = storage[entity]?[relationship] {
                        storage[entity, default: [:]][relationship] = .toOne(column: key, entityColumn: column.name)
                    }
                case .foreignOrder:
                    break
                }
            }
        }
        var joins: [String: JoinTable] = [:]
        var unresolved: [String] = []
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let inverse = model.inverse(of: relationship) else { continue }
                let table = tables[model.rootEntityName(of: relationship.destinationEntityName)]
                if inverse.isToMany {
                    // The inverse may be declared on an ancestor of the destination: its number is the declarer's.
                    let inverseOwner = model.declaringEntity(of: inverse.name, from: relationship.destinationEntityName)
                    var join = Self.joinTable(entity.name, relationship, inverseOwner, inverse, entityNumbers: entityNumbers)
                    if let schema {
                        guard let found = Self.locate(join, in: schema, reflexive: Self.isReflexive(entity.name, relationship, inverseOwner, inverse), entityNumbers: entityNumbers) else {
                            unresolved.append("\(entity.name).\(relationship.name)")
                            continue
                        }
                        join = found
                    }
                    joins[join.name] = join
                    let mine = join.entity == entity.name && join.relationship == relationship.name
                    storage[entity.name, default: [:]][relationship.name] = .toManyViaJoin(
                        table: join.name,
                        column: mine ? join.column : join.inverseColumn,
                        otherColumn: mine ? join.inverseColumn : join.column,
                        orderColumn: mine ? join.orderColumn : join.inverseOrderColumn)
                } else if let table, case .toOne(let column, _)? = storage[relationship.destinationEntityName]?[inverse.name] {
                    var order = relationship.isOrdered ? "Z_FOK_" + Self.columnStem(inverse.name) : nil
                    if let schema, let columns = schema[table.name] {
                        guard columns.contains(column) else {
                            unresolved.append("\(entity.name).\(relationship.name)")
                            continue
                        }
                        // An order column the file lacks reads as unordered (by primary key), not as an error.
                        if let name = order, !columns.contains(name) { order = nil }
                    }
                    storage[entity.name, default: [:]][relationship.name] = .toManyViaInverse(
                        table: table.name, column: column, orderColumn: order)
                }
            }
        }
        self.tables = tables
        self.joinTables = joins
        self.unresolvedRelationships = unresolved.sorted()
        self.storage = storage
        self.tombstoneColumnCount = model.entities.map { entity in
            model.allAttributes(of: entity.name).filter(\.preservesValueInHistoryOnDeletion).count
        }.max() ?? 0
    }

    /// Where a property of an entity (inherited or its own) is stored.
    public func storage(of property: String, entity: String, model: ManagedObjectModel) -> PropertyStorage {
        for owner in [entity] + model.ancestors(of: entity) {
            if let found = storage[owner]?[property] { return found }
        }
        return .none
    }

    /// The table holding an entity's rows.
    public func table(for entity: String, model: ManagedObjectModel) -> Table? {
        tables[model.rootEntityName(of: entity)]
    }

    /// The entity numbers of an entity and all its sub-entities.
    public func entityNumbers(ofKind entity: String, model: ManagedObjectModel) -> [Int] {
        model.hierarchy(from: entity).compactMap { entityNumbers[$0] }
    }

    /// The join-table column holding the other side of a relationship that is its own inverse.
    static let reflexiveColumn = "REFLEXIVE"

    /// `Z` + the upper-cased name: Core Data's column stem for a property or entity.
    static func columnStem(_ name: String) -> String { name.uppercased() }

    private static func table(root: String, model: ManagedObjectModel, entityNumbers: [String: Int]) -> Table {
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
    private static func bucket(_ type: AttributeType) -> Int {
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

    private static func joinTable(
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
    private static func isReflexive(
        _ entity: String, _ relationship: RelationshipDescription, _ inverseOwner: String, _ inverse: RelationshipDescription
    ) -> Bool {
        entity == inverseOwner && relationship.name == inverse.name
    }

    /// `Z_FOK_34ASSETS` for the key column `Z_34ASSETS`.
    private static func orderColumn(for keyColumn: String) -> String {
        "Z_FOK_" + keyColumn.dropFirst(2)
    }

    /// Finds the file's table and columns for a derived join table. Real files name the table after
    /// either side and add digits to column names that collide across tables (`Z_34REPRESENTATIVEASSETS1`),
    /// so each candidate is matched by its columns, exact names first.
    private static func locate(_ join: JoinTable, in schema: [String: [String]], reflexive: Bool, entityNumbers: [String: Int]) -> JoinTable? {
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
    private static func match(stem: String, in columns: [String]) -> String? {
        if columns.contains(stem) { return stem }
        let suffixed = columns.filter { hasDigitSuffix($0, after: stem) }
        return suffixed.count == 1 ? suffixed[0] : nil
    }

    private static func hasDigitSuffix(_ name: String, after stem: String) -> Bool {
        name.count > stem.count && name.hasPrefix(stem) && name.dropFirst(stem.count).allSatisfy { $0.isASCII && $0.isNumber }
    }
}
