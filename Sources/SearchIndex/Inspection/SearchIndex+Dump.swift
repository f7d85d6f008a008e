import Foundation
import GRDB

extension SearchIndex {
    /// Every item exactly as indexed, ordered by URI, optionally of some entities only.
    public func dump(entities: [String] = [], exactEntities: Bool = false) throws(SearchIndexError) -> [IndexedItem] {
        var items: [IndexedItem] = []
        try dump(entities: entities, exactEntities: exactEntities) { items.append($0) }
        return items
    }

    /// Streams every item exactly as indexed, ordered by URI, without holding them all in memory.
    public func dump(entities requested: [String] = [], exactEntities: Bool = false, _ body: (IndexedItem) throws -> Void) throws(SearchIndexError) {
        try read { db in try Self.dump(entities: requested, exactEntities: exactEntities, db: db, body) }
    }

    /// A dump inside a read transaction: sub-entities are those of the snapshot it reads.
    static func dump(entities requested: [String], exactEntities: Bool, db: Database, _ body: (IndexedItem) throws -> Void) throws {
        let entities = exactEntities ? requested : try entitiesOfKind(requested, db: db)
        let filter = entities.isEmpty ? "" : " WHERE i.entity IN (\(databaseQuestionMarks(count: entities.count)))"
        let cursor = try Row.fetchCursor(db, sql: """
            SELECT i.uri, i.entity, i.display_name, t.title, t.text, t.keywords, i.latitude, i.longitude, i.date, i.rank
            FROM items i JOIN item_texts t ON t.id = i.id\(filter) ORDER BY i.uri
            """, arguments: StatementArguments(entities))
        while let row = try cursor.next() {
            try body(IndexedItem(
                uri: try row.text(0), entity: try row.text(1), displayName: try row.text(2), title: try row.text(3),
                text: Self.split(try row.text(4)), keywords: Self.split(try row.text(5)),
                latitude: try row.optionalNumber(6), longitude: try row.optionalNumber(7),
                date: try row.optionalNumber(8).map(Date.init(timeIntervalSinceReferenceDate:)), rank: try row.number(9)))
        }
    }

    package static func split(_ joined: String) -> [String] {
        joined.isEmpty ? [] : joined.components(separatedBy: fieldSeparator)
    }
}

/// What `status` reports about an index.
public struct IndexStatistics: Sendable, Hashable {
    /// Items per entity.
    public var itemsPerEntity: [String: Int]
    /// Items with a location.
    public var locatedItems: Int
    /// The file's size in bytes (WAL included).
    public var sizeInBytes: Int64
    /// The schema version.
    public var schemaVersion: Int
    /// Every store's checkpoint.
    public var checkpoints: [StoreCheckpoint]
    /// Per store UUID, the related objects whose dependents are still being re-indexed a page at a time
    /// (``IndexBatch/deferredDependents``): a store listed here is behind on them even at lag 0.
    public var deferredDependents: [String: Int]

    /// Statistics of an index on another backend.
    package init(itemsPerEntity: [String: Int], locatedItems: Int, sizeInBytes: Int64, schemaVersion: Int, checkpoints: [StoreCheckpoint],
                 deferredDependents: [String: Int] = [:]) {
        self.itemsPerEntity = itemsPerEntity
        self.locatedItems = locatedItems
        self.sizeInBytes = sizeInBytes
        self.schemaVersion = schemaVersion
        self.checkpoints = checkpoints
        self.deferredDependents = deferredDependents
    }
}

extension SearchIndex {
    /// The entities the index holds items of, sorted.
    public func entityNames() throws(SearchIndexError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT DISTINCT entity FROM items ORDER BY entity") }
    }

    /// Counts, size, schema version and checkpoints.
    public func statistics() throws(SearchIndexError) -> IndexStatistics {
        // One snapshot: counts and checkpoints always describe the same committed state.
        let (counts, located, version, checkpoints, walks) = try read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT entity, COUNT(*) FROM items GROUP BY entity ORDER BY entity")
            let walks = try Row.fetchAll(db, sql: """
                SELECT s.uuid, COUNT(*) FROM deferred_dependents d JOIN stores s ON s.id = d.store_id GROUP BY s.uuid
                """)
            return (Dictionary(try rows.map { (try $0.text(0), Int(try $0.integer(1))) }, uniquingKeysWith: +),
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items_geo") ?? 0,
                    try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0,
                    try Self.fetchCheckpoints(db),
                    Dictionary(try walks.map { (try $0.text(0), Int(try $0.integer(1))) }, uniquingKeysWith: +))
        }
        let size = ["", "-wal"].reduce(Int64(0)) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int64) ?? 0)
        }
        return IndexStatistics(itemsPerEntity: counts, locatedItems: located, sizeInBytes: size, schemaVersion: version, checkpoints: checkpoints,
                               deferredDependents: walks)
    }
}

/// What `explain` shows: the parse, the plan, the SQL and SQLite's query plan for each statement.
public struct SearchExplanation: Sendable {
    /// One statement the search ran.
    public struct Statement: Sendable {
        /// The SQL.
        public var sql: String
        /// The values bound to its parameters, as a list (`["tokyo", 20]`).
        public var arguments: String
        /// `EXPLAIN QUERY PLAN` rows, indented by depth (or the other backend's plan, line by line).
        public var queryPlan: [String]

        package init(sql: String, arguments: String, queryPlan: [String]) {
            self.sql = sql
            self.arguments = arguments
            self.queryPlan = queryPlan
        }
    }

    /// The parsed query, if any.
    public var parsedQuery: ParsedQuery?
    /// The text expression the database matched, if any, in ``expressionLanguage``.
    public var expression: String?
    /// The language of ``expression``.
    public var expressionLanguage: ExpressionLanguage

    /// The text-matching language of a backend.
    public enum ExpressionLanguage: String, Sendable {
        /// An SQLite index's FTS5 MATCH expression.
        case fts5
        /// PostgreSQL's `tsquery`.
        case tsquery
    }
    /// The plan chosen.
    public var plan: SearchPlan
    /// The statements, in order.
    public var statements: [Statement]
    /// How many hits the search returned (within its limit and offset).
    public var hitCount: Int

    package init(parsedQuery: ParsedQuery?, expression: String?, expressionLanguage: ExpressionLanguage = .fts5, plan: SearchPlan, statements: [Statement],
                 hitCount: Int) {
        self.parsedQuery = parsedQuery
        self.expression = expression
        self.expressionLanguage = expressionLanguage
        self.plan = plan
        self.statements = statements
        self.hitCount = hitCount
    }
}

extension SearchIndex {
    /// Runs a search and reports how it ran.
    public func explain(_ request: SearchRequest) throws(SearchIndexError) -> SearchExplanation {
        let parsed = try Self.validate(request)
        return try read { db in try Self.explain(request, parsed: parsed, itemSets: filterItemSets, db: db) }
    }

    /// An explanation inside a read transaction.
    /// `itemSets`: where the connection keeps the items of filter equalities between searches, as a search would.
    static func explain(_ request: SearchRequest, parsed: ParsedQuery?, itemSets: FilterItemSets?, db: Database) throws -> SearchExplanation {
        let predicate = try Self.predicate(of: request, db: db)
        // The same request a search runs: entity filters widened to sub-entities.
        let request = try Self.withEntityKinds(request, db: db)
        let parsed = try parsed.map { parsed in request.typoTolerance ? try Search.expanded(parsed, db: db) : parsed }
        var search = Search(db: db, request: request, parsed: parsed, predicate: predicate, itemSets: itemSets, recordsStatements: true)
        let results = try search.run()
        if !request.facets.isEmpty || request.countsTotal {
            // The total and the facets, counted as a search counts them.
            var all = Search(db: db, request: request.unpaged, parsed: parsed, predicate: predicate, itemSets: itemSets, recordsStatements: true)
            _ = try all.totalAndFacets()
            search.record(statementsOf: all)
        }
        var statements: [SearchExplanation.Statement] = []
        for (sql, arguments) in search.statements {
            var depth: [Int: Int] = [:]
            let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { row -> String in
                let id: Int = row["id"], parent: Int = row["parent"]
                let level = (depth[parent] ?? -1) + 1
                depth[id] = level
                return String(repeating: "  ", count: level) + (row["detail"] as String)
            }
            statements.append(.init(sql: sql, arguments: arguments.description, queryPlan: plan))
        }
        return SearchExplanation(parsedQuery: parsed, expression: parsed?.expression, plan: results.plan, statements: statements,
                                 hitCount: results.hits.count)
    }
}
