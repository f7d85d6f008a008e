import Foundation
import GRDB

extension SearchIndex {
    /// Applies upserts, deletes and the store's checkpoint in one transaction.
    ///
    /// Upserts are idempotent (applying a batch twice leaves the same index); a delete of a URI the
    /// index does not hold is a no-op. On any error nothing is written.
    @discardableResult
    public func apply(_ batch: IndexBatch) throws(SearchIndexError) -> BatchResult {
        try write { db in
            let storeID = try Self.saveCheckpoint(batch.checkpoint, db: db)
            var result = BatchResult(inserted: 0, updated: 0, deleted: 0)
            let deleted = Set(batch.deletes)
            for uri in batch.deletes where try Self.delete(uri: uri, db: db) { result.deleted += 1 }
            for item in batch.upserts where !deleted.contains(item.uri) {
                if try Self.upsert(item, storeID: storeID, db: db) { result.inserted += 1 } else { result.updated += 1 }
            }
            return result
        }
    }

    /// Removes every item of a store and its checkpoint (before a rebuild), in one transaction.
    @discardableResult
    public func removeStore(uuid: String) throws(SearchIndexError) -> Int {
        try write { db in
            guard let storeID = try Int64.fetchOne(db, sql: "SELECT id FROM stores WHERE uuid = ?", arguments: [uuid]) else { return 0 }
            let uris = try String.fetchAll(db, sql: "SELECT uri FROM items WHERE store_id = ?", arguments: [storeID])
            for uri in uris { _ = try Self.delete(uri: uri, db: db) }
            try db.execute(sql: "DELETE FROM stores WHERE id = ?", arguments: [storeID])
            return uris.count
        }
    }

    /// The checkpoint of a store, if the index holds one.
    public func checkpoint(storeUUID: String) throws(SearchIndexError) -> StoreCheckpoint? {
        try checkpoints().first { $0.storeUUID == storeUUID }
    }

    /// Every store's checkpoint, by UUID.
    public func checkpoints() throws(SearchIndexError) -> [StoreCheckpoint] {
        try read { db in try Self.fetchCheckpoints(db) }
    }

    static func fetchCheckpoints(_ db: Database) throws -> [StoreCheckpoint] {
        try Row.fetchAll(db, sql: "SELECT uuid, path, token, model_digest, configuration_digest, export_state, updated_at FROM stores ORDER BY uuid").map { row in
            StoreCheckpoint(storeUUID: row[0], storePath: row[1], token: row[2], modelDigest: row[3],
                            configurationDigest: row[4], exportState: row[5],
                            updatedAt: Date(timeIntervalSinceReferenceDate: row[6]))
        }
    }

    private static func saveCheckpoint(_ checkpoint: StoreCheckpoint, db: Database) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO stores (uuid, path, token, model_digest, configuration_digest, export_state, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(uuid) DO UPDATE SET path = excluded.path, token = excluded.token, model_digest = excluded.model_digest,
                configuration_digest = excluded.configuration_digest, export_state = excluded.export_state, updated_at = excluded.updated_at
            """, arguments: [checkpoint.storeUUID, checkpoint.storePath, checkpoint.token, checkpoint.modelDigest,
                             checkpoint.configurationDigest, checkpoint.exportState, checkpoint.updatedAt.timeIntervalSinceReferenceDate])
        return try Int64.fetchOne(db, sql: "SELECT id FROM stores WHERE uuid = ?", arguments: [checkpoint.storeUUID]) ?? 0
    }

    /// Text fields are stored joined by U+001F, which no tokenizer treats as part of a word.
    static let fieldSeparator = "\u{1F}"

    static func joined(_ fields: [String]) -> String {
        fields.map { $0.replacingOccurrences(of: fieldSeparator, with: " ") }.joined(separator: fieldSeparator)
    }

    /// Multiplies relevance: 1 for rank 0, about 1.35 for a rank of ten million (a big city's
    /// population). Enough to order near-ties, never to bury a much better text match.
    static func boost(forRank rank: Double) -> Double {
        1 + 0.05 * log10(1 + max(rank, 0))
    }

    /// Inserts or replaces an item; true when it was new.
    private static func upsert(_ item: IndexedItem, storeID: Int64, db: Database) throws -> Bool {
        let text = joined(item.text), keywords = joined(item.keywords)
        let location = item.hasLocation
        let values: [DatabaseValueConvertible?] = [
            item.uri, storeID, item.entity, item.displayName, item.title, text, keywords,
            location ? item.latitude : nil, location ? item.longitude : nil,
            item.date?.timeIntervalSinceReferenceDate, item.rank, boost(forRank: item.rank),
        ]
        // Insert-or-ignore first: for new items (the common case of a first export) that is the only
        // lookup; an existing item is replaced through the update path, which keeps FTS in sync.
        let insert = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO items (uri, store_id, entity, display_name, title, text, keywords, latitude, longitude, date, rank, boost)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try insert.execute(arguments: StatementArguments(values))
        let isNew = db.changesCount > 0
        let id: Int64
        if isNew {
            id = db.lastInsertedRowID
        } else {
            guard let old = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, display_name, title, text, keywords FROM items WHERE uri = ?"),
                                             arguments: [item.uri]) else { return false }
            id = old[0]
            try db.cachedStatement(sql: "INSERT INTO items_fts (items_fts, rowid, display_name, title, text, keywords) VALUES ('delete', ?, ?, ?, ?, ?)")
                .execute(arguments: [id, old[1], old[2], old[3], old[4]])
            try db.cachedStatement(sql: """
                UPDATE items SET store_id = ?, entity = ?, display_name = ?, title = ?, text = ?, keywords = ?, latitude = ?, longitude = ?, date = ?, rank = ?, boost = ?
                WHERE id = ?
                """).execute(arguments: StatementArguments(Array(values.dropFirst()) + [id]))
            try db.cachedStatement(sql: "DELETE FROM items_geo WHERE id = ?").execute(arguments: [id])
        }
        try db.cachedStatement(sql: "INSERT INTO items_fts (rowid, display_name, title, text, keywords) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [id, item.displayName, item.title, text, keywords])
        if location, let latitude = item.latitude, let longitude = item.longitude {
            try db.cachedStatement(sql: "INSERT INTO items_geo (id, min_lat, max_lat, min_lon, max_lon) VALUES (?, ?, ?, ?, ?)")
                .execute(arguments: [id, latitude, latitude, longitude, longitude])
        }
        return isNew
    }

    /// Removes an item; true when it existed.
    private static func delete(uri: String, db: Database) throws -> Bool {
        guard let old = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, display_name, title, text, keywords FROM items WHERE uri = ?"),
                                         arguments: [uri]) else { return false }
        let id: Int64 = old[0]
        try db.cachedStatement(sql: "INSERT INTO items_fts (items_fts, rowid, display_name, title, text, keywords) VALUES ('delete', ?, ?, ?, ?, ?)")
            .execute(arguments: [id, old[1], old[2], old[3], old[4]])
        try db.cachedStatement(sql: "DELETE FROM items WHERE id = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM items_geo WHERE id = ?").execute(arguments: [id])
        return true
    }
}
