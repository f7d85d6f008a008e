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
package struct StoreLayout: Sendable {
    /// One column of an entity table.
    package struct Column: Sendable, Hashable {
        /// What a column holds.
        package enum Content: Sendable, Hashable {
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
        package var name: String
        /// The declared SQL type.
        package var sqlType: String
        /// What the column holds.
        package var content: Content
    }

    /// The table of one entity hierarchy.
    package struct Table: Sendable {
        /// The table name, e.g. `ZBOOK`.
        package var name: String
        /// The root entity of the hierarchy.
        package var rootEntity: String
        /// Columns after `Z_PK, Z_ENT, Z_OPT`, in DDL order.
        package var columns: [Column]
    }

    /// A many-to-many join table.
    ///
    /// Real stores show `Z_26ASSETS ( Z_26ALBUMS, Z_34ASSETS, Z_FOK_34ASSETS )` for Album #26 `assets` ↔
    /// GenericAsset #34 `albums`: each key column is `Z_<n>` + the name of the relationship that points
    /// at entity *n*, and an ordered relationship's order sits in `Z_FOK_` + its destination's key column
    /// less the `Z_`. A relationship that is its own inverse keeps the other side in `REFLEXIVE`.
    package struct JoinTable: Sendable {
        /// The table name, e.g. `Z_1TAGS`.
        package var name: String
        /// The entity and relationship on side *a* (whose name sorts first).
        package var entity: String
        /// The relationship on side *a*.
        package var relationship: String
        /// The entity on side *b*.
        package var inverseEntity: String
        /// The relationship on side *b*.
        package var inverseRelationship: String
        /// The column holding side *a*'s primary keys.
        package var column: String
        /// The column holding side *b*'s primary keys.
        package var inverseColumn: String
        /// The order of side *b*'s objects within side *a*'s relationship, when it is ordered.
        package var orderColumn: String?
        /// The order of side *a*'s objects within side *b*'s relationship, when it is ordered.
        package var inverseOrderColumn: String?
    }

    /// Where a property's data lives.
    package enum PropertyStorage: Sendable, Hashable {
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
    package let entityNumbers: [String: Int]
    /// Entity tables by root entity name.
    package let tables: [String: Table]
    /// Join tables, by name.
    package let joinTables: [String: JoinTable]
    /// The number of `ZTOMBSTONE<n>` columns `ACHANGE` needs.
    package let tombstoneColumnCount: Int
    /// Relationships the schema given to ``init(model:entityNumbers:schema:)`` has no storage for,
    /// as `Entity.relationship`: they read as empty rather than failing every read.
    package let unresolvedRelationships: [String]
    private let storage: [String: [String: PropertyStorage]]

    /// Lays out a model with Core Data's own entity numbering.
    package init(model: ManagedObjectModel) {
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
    package init(model: ManagedObjectModel, entityNumbers: [String: Int], schema: [String: [String]]? = nil) {
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
    package func storage(of property: String, entity: String, model: ManagedObjectModel) -> PropertyStorage {
        for owner in [entity] + model.ancestors(of: entity) {
            if let found = storage[owner]?[property] { return found }
        }
        return .none
    }

    /// The table holding an entity's rows.
    package func table(for entity: String, model: ManagedObjectModel) -> Table? {
        tables[model.rootEntityName(of: entity)]
    }

    /// The entity numbers of an entity and all its sub-entities.
    package func entityNumbers(ofKind entity: String, model: ManagedObjectModel) -> [Int] {
        model.hierarchy(from: entity).compactMap { entityNumbers[$0] }
    }

    /// The join-table column holding the other side of a relationship that is its own inverse.
    package static let reflexiveColumn = "REFLEXIVE"
}
