#if PostgreSQL
import Foundation
import PostgresNIO
import SearchIndex
import Synchronization

/// The one writer of a store's items in a PostgreSQL index.
///
/// It holds the store's advisory lock on its own connection for as long as it lives: a second writer of
/// the same store, on this machine or another, is refused by the database. The lock goes with the
/// connection, so an exporter that is killed, or whose connection drops, frees it at once. Every batch
/// commits on that same connection, in one transaction with the store's checkpoint, after checking that
/// the checkpoint is still the one this writer last wrote: no batch is lost or applied twice.
public final class PostgresIndexWriter: Sendable {
    /// The store this writer writes.
    public let storeUUID: String
    let index: PostgresIndex
    let connection: PostgresConnection
    /// The token this writer last committed (or found), which the next batch must find again.
    private let committed: Mutex<Int64?>
    /// Whether a transaction runs on the connection (one at a time: two would interleave on it), and whether
    /// the connection was given up because a rollback failed (its transaction state is then unknown).
    private let state = Mutex<(busy: Bool, broken: Bool)>((false, false))

    init(index: PostgresIndex, storeUUID: String, connection: PostgresConnection, token: Int64?) {
        self.index = index
        self.storeUUID = storeUUID
        self.connection = connection
        self.committed = Mutex(token)
    }

    /// Takes the store's lock on a connection of its own, or fails naming the process that holds it.
    public static func open(_ index: PostgresIndex, storeUUID: String) async throws(PostgresIndexError) -> PostgresIndexWriter {
        let connection = try await PostgresIndex.connect(index.location)
        do {
            var bindings = PostgresBindings()
            bindings.append(lockName(storeUUID))
            let locked = try await PostgresIndex.value("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", bindings, on: connection, as: Bool.self) ?? false
            guard locked else { throw PostgresIndexError.writerActive(storeUUID: storeUUID, holder: try await holder(of: storeUUID, on: connection)) }
            let token = try await index.checkpoint(storeUUID: storeUUID, on: connection)?.token
            return PostgresIndexWriter(index: index, storeUUID: storeUUID, connection: connection, token: token)
        } catch {
            try? await connection.close()
            throw PostgresIndex.mapped(error)
        }
    }

    /// Gives the lock up and closes the connection.
    public func close() async {
        try? await connection.close()
    }

    /// A writer dropped without ``close()`` gives its store's lock up too (closing twice does nothing).
    deinit {
        // Kept alive until it is closed: postgres-nio asserts a connection is closed before it goes.
        let connection = connection
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    static func lockName(_ storeUUID: String) -> String { "searchlight store " + storeUUID }

    /// Who holds a store's lock: the backend's client address, process and application.
    static func holder(of storeUUID: String, on connection: PostgresConnection) async throws(PostgresIndexError) -> String? {
        var bindings = PostgresBindings()
        bindings.append(lockName(storeUUID))
        let sql = """
            SELECT a.pid, coalesce(host(a.client_addr), 'local'), a.application_name
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND ((l.classid::bigint << 32) | l.objid::bigint) = (hashtextextended($1, 0) & x'FFFFFFFFFFFFFFFF'::bigint)
            LIMIT 1
            """
        guard let row = try await PostgresIndex.rows(sql, bindings, on: connection).first else { return nil }
        let (pid, client, application) = try PostgresIndex.decode(row, as: (Int32, String, String).self)
        return "server process \(pid), client \(client)" + (application.isEmpty ? "" : ", \(application)")
    }

    /// Applies a batch and its checkpoint in one transaction.
    public func apply(_ batch: IndexBatch) async throws(PostgresIndexError) -> BatchResult {
        guard batch.checkpoint.storeUUID == storeUUID else {
            throw .server(message: "a batch of store \(batch.checkpoint.storeUUID) given to the writer of \(storeUUID)", sqlState: nil)
        }
        let expected = committed.withLock { $0 }
        return try await transaction { () async throws(PostgresIndexError) -> BatchResult in
            let result = try await write(batch, expecting: expected)
            try await PostgresIndex.execute("COMMIT", on: connection)
            committed.withLock { $0 = batch.checkpoint.token }
            return result
        }
    }

    /// Runs a body inside BEGIN … (its own COMMIT), one at a time; rolls back when it fails. A connection
    /// whose rollback fails is closed and the writer refuses from then on: its next BEGIN could otherwise
    /// join the half-done transaction.
    private func transaction<Result>(_ body: () async throws(PostgresIndexError) -> Result) async throws(PostgresIndexError) -> Result {
        let refusal = state.withLock { state -> PostgresIndexError? in
            if state.broken { return .server(message: "this writer's connection was closed after a failed rollback; open a new writer", sqlState: nil) }
            if state.busy { return .server(message: "a writer applies one batch at a time; wait for the previous one", sqlState: nil) }
            state.busy = true
            return nil
        }
        if let refusal { throw refusal }
        defer { state.withLock { $0.busy = false } }
        try await PostgresIndex.execute("BEGIN", on: connection)
        do {
            return try await body()
        } catch {
            do { try await PostgresIndex.execute("ROLLBACK", on: connection) } catch {
                state.withLock { $0.broken = true }
                try? await connection.close()
            }
            throw error
        }
    }

    private func write(_ batch: IndexBatch, expecting expected: Int64?) async throws(PostgresIndexError) -> BatchResult {
        // The checkpoint row, locked: it must be where this writer left it.
        var bindings = PostgresBindings()
        bindings.append(storeUUID)
        let found = try await PostgresIndex.value("SELECT token FROM searchlight_stores WHERE uuid = $1 FOR UPDATE", bindings, on: connection, as: Int64.self)
        guard found == expected else { throw .checkpointMoved(storeUUID: storeUUID, expected: expected ?? 0, found: found) }

        // As the SQLite index applies a batch: a URI deleted is not upserted, and of a URI upserted twice the last wins.
        let deleted = Set(batch.deletes)
        let prepared = batch.preparedUpserts
        var last: [String: Int] = [:]
        for (position, upsert) in prepared.enumerated() where !deleted.contains(upsert.item.uri) { last[upsert.item.uri] = position }
        let rows = last.values.sorted().map { ItemRow(prepared[$0]) }
        var result = BatchResult()
        var delta = ItemRow.Statistics()
        // Replaced and deleted items go first; what they held leaves the statistics.
        let touched = Array(Set(batch.deletes).union(rows.map(\.uri)))
        var previous: [String: String] = [:]
        if !touched.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(touched)
            let sql = """
                DELETE FROM searchlight_items WHERE uri = ANY($1::text[])
                RETURNING uri, digest, name_positions, title_positions, text_positions, keyword_positions
                """
            for row in try await PostgresIndex.rows(sql, bindings, on: connection) {
                let (uri, digest, name, title, text, keywords) = try PostgresIndex.decode(row, as: (String, String, Int32, Int32, Int32, Int32).self)
                previous[uri] = digest
                delta.subtract(name: Int(name), title: Int(title), text: Int(text), keywords: Int(keywords))
            }
        }
        if !rows.isEmpty { try await insert(rows) }
        for row in rows {
            delta.add(row)
            switch previous.removeValue(forKey: row.uri) {
            case nil: result.inserted += 1
            case row.digest: result.unchanged += 1
            default: result.updated += 1
            }
        }
        result.deleted = previous.count
        try await writeShownValues(batch)
        try await writeCheckpoint(batch.checkpoint, delta: delta)
        return result
    }

    /// Inserts rows in one statement: each column bound as an array and unnested.
    private func insert(_ rows: [ItemRow]) async throws(PostgresIndexError) {
        var bindings = PostgresBindings()
        bindings.append(rows.map(\.uri))
        bindings.append(storeUUID)
        bindings.append(rows.map(\.item.entity))
        bindings.append(rows.map(\.item.displayName))
        bindings.append(rows.map(\.item.title))
        bindings.append(rows.map(\.text))
        bindings.append(rows.map(\.keywords))
        // Coordinates and dates as text: arrays with NULLs, read back exactly (shortest round-trip digits).
        bindings.append(rows.map { $0.item.latitude.map { "\($0)" } ?? "" })
        bindings.append(rows.map { $0.item.longitude.map { "\($0)" } ?? "" })
        bindings.append(rows.map { $0.item.date.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "" })
        bindings.append(rows.map(\.item.rank))
        bindings.append(rows.map(\.valueLengths))
        bindings.append(rows.map(\.attributes))
        bindings.append(rows.map(\.digest))
        bindings.append(rows.map { Int32(clamping: $0.vector.columnSizes[0]) })
        bindings.append(rows.map { Int32(clamping: $0.vector.columnSizes[1]) })
        bindings.append(rows.map { Int32(clamping: $0.vector.columnSizes[2]) })
        bindings.append(rows.map { Int32(clamping: $0.vector.columnSizes[3]) })
        bindings.append(rows.map(\.vector.literal))
        let sql = """
            INSERT INTO searchlight_items (uri, store_uuid, entity, display_name, title, text, keywords, latitude, longitude, place, date,
                                           rank, value_lengths, attributes, digest, name_positions, title_positions, text_positions,
                                           keyword_positions, terms)
            SELECT u.uri, $2, u.entity, u.display_name, u.title, u.text, u.keywords,
                   NULLIF(u.latitude, '')::double precision, NULLIF(u.longitude, '')::double precision,
                   CASE WHEN u.latitude <> '' AND u.longitude <> ''
                        THEN ST_SetSRID(ST_MakePoint(u.longitude::double precision, u.latitude::double precision), 4326)::geography END,
                   NULLIF(u.date, '')::double precision, u.rank, u.value_lengths, u.attributes, u.digest,
                   u.name_positions, u.title_positions, u.text_positions, u.keyword_positions, u.terms::tsvector
            FROM unnest($1::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                        $11::float8[], $12::text[], $13::text[], $14::text[], $15::int4[], $16::int4[], $17::int4[], $18::int4[], $19::text[])
                 AS u(uri, entity, display_name, title, text, keywords, latitude, longitude, date, rank, value_lengths, attributes, digest,
                      name_positions, title_positions, text_positions, keyword_positions, terms)
            """
        _ = try await PostgresIndex.rows(sql, bindings, on: connection)
    }

    /// What related objects show the items that depend on them, kept with the batch that read them.
    private func writeShownValues(_ batch: IndexBatch) async throws(PostgresIndexError) {
        if batch.forgetsStoreShownValues {
            var bindings = PostgresBindings()
            bindings.append(storeUUID)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_shown_values WHERE store_uuid = $1", bindings, on: connection)
        }
        if !batch.forgottenShownValues.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(batch.forgottenShownValues)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_shown_values WHERE uri = ANY($1::text[])", bindings, on: connection)
        }
        if !batch.shownValues.isEmpty {
            let sorted = batch.shownValues.sorted { $0.key < $1.key }
            var bindings = PostgresBindings()
            bindings.append(sorted.map(\.key))
            bindings.append(sorted.map(\.value))
            bindings.append(storeUUID)
            _ = try await PostgresIndex.rows("""
                INSERT INTO searchlight_shown_values (uri, store_uuid, digest) SELECT u, $3, d FROM unnest($1::text[], $2::text[]) AS t(u, d)
                ON CONFLICT (uri) DO UPDATE SET digest = excluded.digest, store_uuid = excluded.store_uuid
                """, bindings, on: connection)
        }
    }

    private func writeCheckpoint(_ checkpoint: StoreCheckpoint, delta: ItemRow.Statistics) async throws(PostgresIndexError) {
        var bindings = PostgresBindings()
        bindings.append(checkpoint.storeUUID)
        bindings.append(checkpoint.storePath)
        bindings.append(checkpoint.token)
        bindings.appendOptional(checkpoint.tokenTimestamp.map(\.timeIntervalSinceReferenceDate).flatMap { $0.isFinite ? $0 : nil })
        bindings.appendOptional(checkpoint.modelDigest)
        bindings.appendOptional(checkpoint.configurationDigest)
        bindings.appendOptional(checkpoint.configuration)
        bindings.appendOptional(SearchIndex.parentsText(checkpoint.entityParents))
        bindings.appendOptional(checkpoint.exportState)
        bindings.append(checkpoint.updatedAt.timeIntervalSinceReferenceDate)
        bindings.append(Int64(delta.items))
        bindings.append(Int64(delta.name))
        bindings.append(Int64(delta.title))
        bindings.append(Int64(delta.text))
        bindings.append(Int64(delta.keywords))
        _ = try await PostgresIndex.rows("""
            INSERT INTO searchlight_stores (uuid, path, token, token_timestamp, model_digest, configuration_digest, configuration,
                                            entity_parents, export_state, updated_at, items, name_positions, title_positions,
                                            text_positions, keyword_positions)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
            ON CONFLICT (uuid) DO UPDATE SET
                path = excluded.path, token = excluded.token, token_timestamp = excluded.token_timestamp,
                model_digest = excluded.model_digest, configuration_digest = excluded.configuration_digest,
                configuration = excluded.configuration, entity_parents = excluded.entity_parents,
                export_state = excluded.export_state, updated_at = excluded.updated_at,
                items = searchlight_stores.items + excluded.items,
                name_positions = searchlight_stores.name_positions + excluded.name_positions,
                title_positions = searchlight_stores.title_positions + excluded.title_positions,
                text_positions = searchlight_stores.text_positions + excluded.text_positions,
                keyword_positions = searchlight_stores.keyword_positions + excluded.keyword_positions
            """, bindings, on: connection)
    }

    /// Removes every item of the store and its checkpoint, in one transaction; returns the items removed.
    public func removeStore() async throws(PostgresIndexError) -> Int {
        try await transaction { () async throws(PostgresIndexError) -> Int in
            var bindings = PostgresBindings()
            bindings.append(storeUUID)
            let removed = try await PostgresIndex.value("WITH gone AS (DELETE FROM searchlight_items WHERE store_uuid = $1 RETURNING 1) SELECT count(*) FROM gone",
                                                        bindings, on: connection, as: Int64.self) ?? 0
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_shown_values WHERE store_uuid = $1", bindings, on: connection)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_stores WHERE uuid = $1", bindings, on: connection)
            try await PostgresIndex.execute("COMMIT", on: connection)
            committed.withLock { $0 = nil }
            return Int(removed)
        }
    }
}
#endif
