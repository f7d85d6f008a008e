import CoreDataStore
extension StoreLayout {
    /// The schema Core Data creates for a model, statement by statement, in the order Apple-written
    /// stores show in `sqlite_master`: entity tables, join tables, their indexes (foreign keys, `Z_ENT`,
    /// fetch indexes, uniqueness constraints), bookkeeping tables, then history.
    ///
    /// Derived-attribute triggers are not generated: their SQL is Core Data's private business.
    public func schemaStatements(model: ManagedObjectModel, historyTracking: Bool) -> [String] {
        var statements: [String] = []
        let roots = tables.values.sorted { (entityNumbers[$0.rootEntity] ?? 0) < (entityNumbers[$1.rootEntity] ?? 0) }
        for table in roots {
            let columns = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + table.columns.map { "\($0.name) \($0.sqlType)" }
            statements.append("CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")) )")
        }
        for join in joinTables.values.sorted(by: { $0.name < $1.name }) {
            var columns = ["\(join.column) INTEGER", "\(join.inverseColumn) INTEGER"]
            if let order = join.orderColumn { columns.append("\(order) INTEGER") }
            if let order = join.inverseOrderColumn { columns.append("\(order) INTEGER") }
            columns.append("PRIMARY KEY (\(join.column), \(join.inverseColumn))")
            statements.append("CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")) )")
        }
        for table in roots {
            statements += indexStatements(for: table, model: model)
        }
        for join in joinTables.values.sorted(by: { $0.name < $1.name }) {
            statements.append("CREATE INDEX \(join.name)_\(join.inverseColumn)_INDEX ON \(join.name) (\(join.inverseColumn), \(join.column))")
        }
        statements += [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
        ]
        if historyTracking {
            let tombstones = (0..<tombstoneColumnCount).map { ", ZTOMBSTONE\($0) BLOB" }.joined()
            statements += [
                "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB\(tombstones) )",
                "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
                "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
                "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
                "CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
                "CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
                "CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
                "CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
                "CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
                "CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
                "CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
            ]
        }
        return statements
    }

    private func indexStatements(for table: Table, model: ManagedObjectModel) -> [String] {
        var statements: [String] = []
        for column in table.columns {
            if case .foreignKey = column.content {
                statements.append("CREATE INDEX \(table.name)_\(column.name)_INDEX ON \(table.name) (\(column.name))")
            }
        }
        let hierarchy = model.hierarchy(from: table.rootEntity)
        if hierarchy.count > 1 {
            statements.append("CREATE INDEX \(table.name)_Z_ENT_INDEX ON \(table.name) (Z_ENT)")
        }
        for name in hierarchy {
            guard let entity = model.entity(named: name) else { continue }
            for index in entity.fetchIndexes where !index.elements.contains(where: \.isRTree) {
                let columns = index.elements.compactMap { element in
                    indexedColumn(element.propertyName, entity: name, model: model)
                        .map { "\($0) COLLATE BINARY \(element.isAscending ? "ASC" : "DESC")" }
                }
                guard !columns.isEmpty else { continue }
                statements.append("CREATE INDEX Z_\(name)_\(index.name) ON \(table.name) (\(columns.joined(separator: ", ")))")
            }
            for index in entity.fetchIndexes where index.elements.contains(where: \.isRTree) {
                statements += rtreeStatements(index, entity: name, table: table.name, model: model)
            }
        }
        for name in hierarchy {
            guard let entity = model.entity(named: name) else { continue }
            for constraint in entity.uniquenessConstraints {
                let columns = constraint.compactMap { indexedColumn($0, entity: name, model: model).map { "\($0) COLLATE BINARY ASC" } }
                guard columns.count == constraint.count, !columns.isEmpty else { continue }
                statements.append("CREATE UNIQUE INDEX Z_\(name)_UNIQUE_\(constraint.joined(separator: "_")) ON \(table.name) (\(columns.joined(separator: ", ")))")
            }
        }
        return statements
    }

    /// An R-tree fetch index: a virtual table of bounding boxes kept current by triggers.
    /// (The spelling Core Data uses is reported, not seen in a real store.)
    private func rtreeStatements(_ index: FetchIndexDescription, entity: String, table: String, model: ManagedObjectModel) -> [String] {
        let columns = index.elements.compactMap { indexedColumn($0.propertyName, entity: entity, model: model) }
        guard !columns.isEmpty, columns.count == index.elements.count else { return [] }
        let name = "Z_\(entity)_\(index.name)"
        let bounds = columns.flatMap { ["\($0)_MIN", "\($0)_MAX"] }
        let values = columns.flatMap { ["NEW.\($0)", "NEW.\($0)"] }.joined(separator: ", ")
        let present = columns.map { "NEW.\($0) IS NOT NULL" }.joined(separator: " AND ")
        let kinds = entityNumbers(ofKind: entity, model: model).map(String.init).joined(separator: ", ")
        // Rows without coordinates have no box: the SELECT … WHERE skips them.
        let upsert = "INSERT OR REPLACE INTO \(name) (Z_PK, \(bounds.joined(separator: ", "))) SELECT NEW.Z_PK, \(values) WHERE \(present)"
        return [
            "CREATE VIRTUAL TABLE \(name) USING RTREE (Z_PK INTEGER PRIMARY KEY, \(bounds.map { "\($0) FLOAT" }.joined(separator: ", ")))",
            "CREATE TRIGGER \(name)_INSERT AFTER INSERT ON \(table) FOR EACH ROW WHEN NEW.Z_ENT IN (\(kinds)) BEGIN \(upsert); END",
            "CREATE TRIGGER \(name)_UPDATE AFTER UPDATE ON \(table) FOR EACH ROW WHEN NEW.Z_ENT IN (\(kinds)) BEGIN DELETE FROM \(name) WHERE Z_PK = OLD.Z_PK; \(upsert); END",
            "CREATE TRIGGER \(name)_DELETE AFTER DELETE ON \(table) FOR EACH ROW BEGIN DELETE FROM \(name) WHERE Z_PK = OLD.Z_PK; END",
        ]
    }

    private func indexedColumn(_ property: String, entity: String, model: ManagedObjectModel) -> String? {
        switch storage(of: property, entity: entity, model: model) {
        case .attribute(let columns): columns.first
        case .toOne(let column, _): column
        default: nil
        }
    }
}
