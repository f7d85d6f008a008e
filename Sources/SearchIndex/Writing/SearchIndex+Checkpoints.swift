import Foundation
import GRDB
import CSearchTokenizer
import GRDBSQLite

/// Each store's checkpoint: its history token, digests and export state, in the `stores` table.
extension SearchIndex {
    /// The checkpoint of a store, if the index holds one.
    public func checkpoint(storeUUID: String) throws(SearchIndexError) -> StoreCheckpoint? {
        try checkpoints().first { $0.storeUUID == storeUUID }
    }

    /// Every store's checkpoint, by UUID.
    public func checkpoints() throws(SearchIndexError) -> [StoreCheckpoint] {
        try read { db in try Self.fetchCheckpoints(db) }
    }

    static func fetchCheckpoints(_ db: Database) throws -> [StoreCheckpoint] {
        let sql = "SELECT uuid, path, token, model_digest, configuration_digest, export_state, updated_at, token_timestamp, configuration, entity_parents FROM stores ORDER BY uuid"
        // Decoded with their types checked: a damaged index is an error to report, not a trap.
        return try Row.fetchAll(db.cachedStatement(sql: sql)).map { row in
            StoreCheckpoint(storeUUID: try row.text(0), storePath: try row.text(1), token: try row.integer(2),
                            modelDigest: try row.optionalText(3), configurationDigest: try row.optionalText(4),
                            exportState: try row.optionalText(5),
                            updatedAt: Date(timeIntervalSinceReferenceDate: try row.optionalNumber(6) ?? 0),
                            tokenTimestamp: try row.optionalNumber(7).map(Date.init(timeIntervalSinceReferenceDate:)),
                            configuration: try row.optionalText(8), entityParents: Self.parents(try row.optionalText(9)))
        }
    }

    static func saveCheckpoint(_ checkpoint: StoreCheckpoint, db: Database) throws -> Int64 {
        try db.execute(sql: """
            INSERT INTO stores (uuid, path, token, model_digest, configuration_digest, export_state, updated_at, token_timestamp, configuration,
                                entity_parents)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(uuid) DO UPDATE SET path = excluded.path, token = excluded.token, model_digest = excluded.model_digest,
                configuration_digest = excluded.configuration_digest, export_state = excluded.export_state, updated_at = excluded.updated_at,
                token_timestamp = excluded.token_timestamp, configuration = excluded.configuration, entity_parents = excluded.entity_parents
            """, arguments: [checkpoint.storeUUID, checkpoint.storePath, checkpoint.token, checkpoint.modelDigest,
                             checkpoint.configurationDigest, checkpoint.exportState, checkpoint.updatedAt.timeIntervalSinceReferenceDate,
                             checkpoint.tokenTimestamp.map(\.timeIntervalSinceReferenceDate).flatMap { $0.isFinite ? $0 : nil },
                             checkpoint.configuration, Self.parentsText(checkpoint.entityParents)])
        return try Int64.fetchOne(db, sql: "SELECT id FROM stores WHERE uuid = ?", arguments: [checkpoint.storeUUID]) ?? 0
    }

    /// `Child<TAB>Parent` lines, sorted, or NULL when there are none.
    package static func parentsText(_ parents: [String: String]) -> String? {
        parents.isEmpty ? nil : parents.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)" }.joined(separator: "\n")
    }

    package static func parents(_ text: String?) -> [String: String] {
        var parents: [String: String] = [:]
        for line in (text ?? "").split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            if parts.count == 2 { parents[String(parts[0])] = String(parts[1]) }
        }
        return parents
    }

    /// Text fields are stored joined by U+001F, which no tokenizer treats as part of a word.
    static let fieldSeparator = "\u{1F}"
}
