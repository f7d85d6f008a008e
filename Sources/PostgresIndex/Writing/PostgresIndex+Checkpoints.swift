#if PostgreSQL
import Foundation
import PostgresNIO
import SearchIndex

extension PostgresIndex {
    static let checkpointColumns = """
        uuid, path, token, model_digest, configuration_digest, export_state, updated_at, token_timestamp, configuration, entity_parents
        """

    /// A store's checkpoint, or nil when the index holds none.
    public func checkpoint(storeUUID: String) async throws(PostgresIndexError) -> StoreCheckpoint? {
        try await checkpoint(storeUUID: storeUUID, on: connection)
    }

    func checkpoint(storeUUID: String, on connection: PostgresConnection) async throws(PostgresIndexError) -> StoreCheckpoint? {
        var bindings = PostgresBindings()
        bindings.append(storeUUID)
        return try await Self.rows("SELECT \(Self.checkpointColumns) FROM searchlight_stores WHERE uuid = $1", bindings, on: connection)
            .first.map(Self.checkpoint(from:))
    }

    /// Every store's checkpoint, by UUID.
    public func checkpoints() async throws(PostgresIndexError) -> [StoreCheckpoint] {
        try await rows("SELECT \(Self.checkpointColumns) FROM searchlight_stores ORDER BY uuid").map(Self.checkpoint(from:))
    }

    static func checkpoint(from row: PostgresRow) throws(PostgresIndexError) -> StoreCheckpoint {
        let (uuid, path, token, model, configurationDigest, state, updated, timestamp, configuration, parents) =
            try decode(row, as: (String, String, Int64, String?, String?, String?, Double, Double?, String?, String?).self)
        var checkpoint = StoreCheckpoint(storeUUID: uuid, storePath: path, token: token, modelDigest: model, configurationDigest: configurationDigest,
                                         exportState: state, updatedAt: Date(timeIntervalSinceReferenceDate: updated))
        checkpoint.tokenTimestamp = timestamp.map(Date.init(timeIntervalSinceReferenceDate:))
        checkpoint.configuration = configuration
        checkpoint.entityParents = SearchIndex.parents(parents)
        return checkpoint
    }

    /// What `status` reports: items per entity, located items, the database's size, the schema and the
    /// checkpoints.
    public func statistics() async throws(PostgresIndexError) -> IndexStatistics {
        var perEntity: [String: Int] = [:]
        for row in try await rows("SELECT entity, count(*) FROM searchlight_items GROUP BY entity") {
            let (entity, count) = try Self.decode(row, as: (String, Int64).self)
            perEntity[entity] = Int(count)
        }
        let located = try await value("SELECT count(*) FROM searchlight_items WHERE place IS NOT NULL", as: Int64.self) ?? 0
        let size = try await value("""
            SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
            WHERE c.relkind = 'r' AND c.relname LIKE 'searchlight\\_%'
              AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
            """, as: Int64.self) ?? 0
        // The database's own version: a reader of an older schema says so.
        let version = try await value("SELECT max(version) FROM searchlight_schema", as: Int.self) ?? 0
        // Checkpoints before walks (separate statements, not one snapshot): a batch committed in between shows a
        // lag with its walk, or its walk with the lag before, never the token without the walk it started.
        let checkpoints = try await checkpoints()
        // Walks have a table from migration 4 on; a reader of an older database has none to count.
        var walks: [String: Int] = [:]
        if version >= 4 {
            for row in try await rows("SELECT store_uuid, count(*) FROM searchlight_deferred_dependents GROUP BY store_uuid") {
                let (store, count) = try Self.decode(row, as: (String, Int64).self)
                walks[store] = Int(count)
            }
        }
        return IndexStatistics(itemsPerEntity: perEntity, locatedItems: Int(located), sizeInBytes: size,
                               schemaVersion: version, checkpoints: checkpoints, deferredDependents: walks)
    }

    /// Every entity a request's entity filter may name: those with items, and their ancestors.
    public func filterableEntityNames() async throws(PostgresIndexError) -> [String] {
        let entities = try await rows("SELECT DISTINCT entity FROM searchlight_items").map { row throws(PostgresIndexError) in
            try Self.decode(row, as: String.self)
        }
        return SearchIndex.filterableEntityNames(withItems: entities, checkpoints: try await checkpoints())
    }

    /// Every item exactly as indexed, ordered by URI, optionally of some entities (and their sub-entities).
    public func dump(entities requested: [String] = [], exactEntities: Bool = false) async throws(PostgresIndexError) -> [IndexedItem] {
        let entities = exactEntities ? requested : SearchIndex.entitiesOfKind(requested, checkpoints: try await checkpoints())
        var bindings = PostgresBindings()
        var filter = ""
        if !entities.isEmpty {
            bindings.append(entities)
            filter = " WHERE entity = ANY($1::text[])"
        }
        let sql = """
            SELECT uri, entity, display_name, title, text, keywords, latitude, longitude, date, rank
            FROM searchlight_items\(filter) ORDER BY uri COLLATE "C"
            """
        return try await rows(sql, bindings).map { row throws(PostgresIndexError) in
            let (uri, entity, name, title, text, keywords, latitude, longitude, date, rank) =
                try Self.decode(row, as: (String, String, String, String, String, String, Double?, Double?, Double?, Double).self)
            return IndexedItem(uri: uri, entity: entity, displayName: name, title: title, text: SearchIndex.split(text),
                               keywords: SearchIndex.split(keywords), latitude: latitude, longitude: longitude,
                               date: date.map(Date.init(timeIntervalSinceReferenceDate:)), rank: rank)
        }
    }
}
#endif
