#if PostgreSQL
import Foundation
import PostgresNIO
import SearchIndex
import Synchronization

/// The writer of stores' items in a PostgreSQL index: one per exporter process.
///
/// It holds each store's advisory lock (``claim(storeUUID:)``) on its own connection for as long as it
/// lives: a second writer of the same store, on this machine or another, is refused by the database.
/// The locks go with the connection, so an exporter that is killed, or whose connection drops, frees
/// them at once. Every batch commits on that same connection, in one transaction with its store's
/// checkpoint, after checking that the checkpoint is still the one this writer last wrote: no batch is
/// lost or applied twice. As an ``IndexWriter`` it serves the exporter, blocking the exporter's thread.
public final class PostgresIndexWriter: IndexWriter {
    let index: PostgresIndex
    let connection: PostgresConnection
    /// The token this writer last committed (or found) for a claimed store, which the next batch must find again.
    private struct Claim { var token: Int64? }
    /// The stores this writer holds the lock of.
    private let claims = Mutex<[String: Claim]>([:])
    /// Whether a statement or transaction runs on the connection (one at a time: two would interleave on
    /// it), and whether the connection was given up because a rollback failed (its state is then unknown).
    private let state = Mutex<(busy: Bool, broken: Bool)>((false, false))

    init(index: PostgresIndex, connection: PostgresConnection) {
        self.index = index
        self.connection = connection
    }

    /// Where the index is, without its password.
    public var location: String { index.location }

    /// Opens a writer on a connection of its own; it claims stores as it is asked to.
    public static func open(_ index: PostgresIndex) async throws(PostgresIndexError) -> PostgresIndexWriter {
        let connection = try await PostgresIndex.connect(index.postgresLocation)
        do {
            // Named for the holder a refused writer is told of. A transaction stays open while an exporter
            // builds its next pages (a large rename takes a while): a server's idle-in-transaction limit
            // would otherwise end it every time, and the exporter would never get past that batch.
            try await PostgresIndex.execute("""
                SET application_name = 'searchlight exporter, pid \(getpid())';
                SET idle_in_transaction_session_timeout = 0
                """, on: connection)
        } catch {
            try? await connection.close()
            throw error
        }
        return PostgresIndexWriter(index: index, connection: connection)
    }

    /// Opens a writer and claims one store, or fails naming the process that holds it.
    public static func open(_ index: PostgresIndex, storeUUID: String) async throws(PostgresIndexError) -> PostgresIndexWriter {
        let writer = try await open(index)
        do {
            try await writer.claim(storeUUID: storeUUID)
        } catch {
            await writer.close()
            throw error
        }
        return writer
    }

    /// Takes a store's lock, or fails naming the process that holds it; claiming a store again does nothing.
    public func claim(storeUUID: String) async throws(PostgresIndexError) {
        guard claims.withLock({ $0[storeUUID] == nil }) else { return }
        try await exclusive { () async throws(PostgresIndexError) in
            var bindings = PostgresBindings()
            bindings.append(Self.lockName(storeUUID))
            let locked = try await PostgresIndex.value("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", bindings, on: connection, as: Bool.self) ?? false
            guard locked else { throw PostgresIndexError.writerActive(storeUUID: storeUUID, holder: try await Self.holder(of: storeUUID, on: connection)) }
            let token = try await index.checkpoint(storeUUID: storeUUID, on: connection)?.token
            claims.withLock { $0[storeUUID] = Claim(token: token) }
        }
    }

    /// Gives the locks up and closes the connection. The locks go first, explicitly: the server frees a
    /// closed connection's locks only when its backend process has ended, a moment later, and a writer
    /// opened straight after (the next run) would be refused its own store.
    public func close() async {
        if !connection.isClosed { _ = try? await PostgresIndex.rows("SELECT pg_advisory_unlock_all()", on: connection) }
        try? await connection.close()
    }

    /// A writer dropped without ``close()`` gives its stores' locks up too (closing twice does nothing).
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

    /// The token the next batch of a claimed store must find, or a refusal for a store not claimed.
    private func expectedToken(_ storeUUID: String) throws(PostgresIndexError) -> Int64? {
        guard let claim = claims.withLock({ $0[storeUUID] }) else {
            throw .misuse("store \(storeUUID) was not claimed by this writer; claim it before writing it")
        }
        return claim.token
    }

    /// Applies a batch and its checkpoint in one transaction.
    public func apply(_ batch: IndexBatch) async throws(PostgresIndexError) -> BatchResult {
        try await apply([batch])
    }

    /// Applies batches in order in one transaction, each with its store's checkpoint.
    public func apply(_ batches: [IndexBatch]) async throws(PostgresIndexError) -> BatchResult {
        try await transaction { () async throws(PostgresIndexError) -> BatchResult in
            var total = BatchResult()
            var tokens: [String: Int64?] = [:]
            for batch in batches { total.add(try await write(batch, tokens: &tokens)) }
            try await PostgresIndex.execute("COMMIT", on: connection)
            record(tokens)
            return total
        }
    }

    /// Takes the tokens a committed transaction wrote as the ones the next batches must find.
    func record(_ tokens: [String: Int64?]) {
        claims.withLock { claims in
            for (uuid, token) in tokens where claims[uuid] != nil { claims[uuid] = Claim(token: token) }
        }
    }

    /// Runs a body alone on the connection: one statement or transaction at a time.
    private func exclusive<Result>(_ body: () async throws(PostgresIndexError) -> Result) async throws(PostgresIndexError) -> Result {
        try acquire()
        defer { giveBackConnection() }
        return try await body()
    }

    /// Takes the connection for one statement or transaction, or refuses.
    private func acquire() throws(PostgresIndexError) {
        let refusal = state.withLock { state -> PostgresIndexError? in
            if state.broken { return .misuse("this writer's connection was closed after a failed rollback; open a new writer") }
            if state.busy { return .misuse("a writer runs one transaction at a time; wait for the one under way") }
            state.busy = true
            return nil
        }
        if let refusal { throw refusal }
    }

    fileprivate func giveBackConnection() {
        state.withLock { $0.busy = false }
    }

    /// Begins a transaction that spans several calls: the exporter sends the batches of one commit as
    /// its pages come. It holds the connection until it commits or rolls back.
    func begin() async throws(PostgresIndexError) -> OpenTransaction {
        try acquire()
        do {
            try await PostgresIndex.execute("BEGIN", on: connection)
        } catch {
            await rollBack()
            giveBackConnection()
            throw error
        }
        return OpenTransaction(writer: self)
    }

    /// A transaction begun by ``begin()``: batches, then a commit or a rollback, which gives the connection back.
    final class OpenTransaction: Sendable {
        let writer: PostgresIndexWriter
        /// What the transaction's batches wrote, per store: the tokens the next batches must find.
        private let tokens = Mutex<[String: Int64?]>([:])
        private let ended = Mutex(false)

        init(writer: PostgresIndexWriter) { self.writer = writer }

        func write(_ batch: IndexBatch) async throws(PostgresIndexError) -> BatchResult {
            var tokens = self.tokens.withLock { $0 }
            let result = try await writer.write(batch, tokens: &tokens)
            self.tokens.withLock { [tokens] in $0 = tokens }
            return result
        }

        func commit() async throws(PostgresIndexError) {
            try await PostgresIndex.execute("COMMIT", on: writer.connection)
            writer.record(tokens.withLock { $0 })
            end()
        }

        /// Rolls back unless the transaction ended (a failed COMMIT has ended it already; rolling back
        /// again only draws a warning).
        func rollBack() async {
            guard !ended.withLock({ $0 }) else { return }
            await writer.rollBack()
            end()
        }

        private func end() {
            let first = ended.withLock { ended in defer { ended = true }; return !ended }
            if first { writer.giveBackConnection() }
        }
    }

    /// Runs a body inside BEGIN … (its own COMMIT), one at a time; rolls back when it fails. A connection
    /// whose rollback fails is closed and the writer refuses from then on: its next BEGIN could otherwise
    /// join the half-done transaction.
    private func transaction<Result>(_ body: () async throws(PostgresIndexError) -> Result) async throws(PostgresIndexError) -> Result {
        try await exclusive { () async throws(PostgresIndexError) -> Result in
            try await PostgresIndex.execute("BEGIN", on: connection)
            do throws(PostgresIndexError) {
                return try await body()
            } catch {
                await rollBack()
                throw error
            }
        }
    }

    func rollBack() async {
        do { try await PostgresIndex.execute("ROLLBACK", on: connection) } catch {
            state.withLock { $0.broken = true }
            try? await connection.close()
        }
    }

    /// Checks, the store's checkpoint row locked, that it is where this writer left it (`tokens` holds
    /// what earlier batches of the transaction wrote); returns the store's rebuild generation.
    private func lockCheckpoint(_ storeUUID: String, tokens: [String: Int64?]) async throws(PostgresIndexError) -> Int64 {
        let expected: Int64? = if let written = tokens[storeUUID] { written } else { try expectedToken(storeUUID) }
        var bindings = PostgresBindings()
        bindings.append(storeUUID)
        var (found, generation): (Int64?, Int64) = (nil, 0)
        if let row = try await PostgresIndex.rows("SELECT token, generation FROM searchlight_stores WHERE uuid = $1 FOR UPDATE", bindings, on: connection).first {
            (found, generation) = try PostgresIndex.decode(row, as: (Int64, Int64).self)
        }
        guard found == expected else { throw .checkpointMoved(storeUUID: storeUUID, expected: expected ?? 0, found: found) }
        return generation
    }

    func write(_ batch: IndexBatch, tokens: inout [String: Int64?]) async throws(PostgresIndexError) -> BatchResult {
        let storeUUID = batch.checkpoint.storeUUID
        let generation = try await lockCheckpoint(storeUUID, tokens: tokens)
        if let foreign = (batch.upserts.map(\.uri) + batch.deletes).first(where: { !Self.belongs($0, to: storeUUID) }) {
            throw .search(.invalidBatch(reason: "\(foreign) is not an object of store \(storeUUID), whose checkpoint the batch carries"))
        }

        // As the SQLite index applies a batch: a URI deleted is not upserted, and of a URI upserted twice the last wins.
        let deleted = Set(batch.deletes)
        let prepared = batch.preparedUpserts
        var last: [String: Int] = [:]
        for (position, upsert) in prepared.enumerated() where !deleted.contains(upsert.item.uri) { last[upsert.item.uri] = position }
        let upserts = last.values.sorted().map { (prepared[$0], ItemRow.Stored(prepared[$0])) }
        var result = BatchResult()
        var delta = ItemRow.Statistics()
        // An item whose stored fields are unchanged is left alone, as the SQLite index leaves it (its
        // generation raised, for a rebuild's sweep); only new and changed items are tokenized and written.
        // A changed item is updated in place, and keeps its attribute rows when its attributes did not
        // change: a country renamed rewrites its places' text, not their attribute rows (each three index
        // entries; inserting them again was 40% of a catch-up's statement time).
        var existing: [String: ExistingRow] = [:]
        if !upserts.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(upserts.map(\.1.item.uri))
            let sql = """
                SELECT uri, digest, attributes, name_positions, title_positions, text_positions, keyword_positions
                FROM searchlight_items WHERE uri = ANY($1::text[])
                """
            for row in try await PostgresIndex.rows(sql, bindings, on: connection) {
                let (uri, digest, attributes, name, title, text, keywords) = try PostgresIndex.decode(row, as: (String, String, String, Int32, Int32, Int32, Int32).self)
                existing[uri] = ExistingRow(digest: digest, attributes: attributes, positions: (Int(name), Int(title), Int(text), Int(keywords)))
            }
        }
        let unchanged = upserts.filter { existing[$0.1.item.uri]?.digest == $0.1.digest }.map(\.1.item.uri)
        let rows = upserts.filter { existing[$0.1.item.uri]?.digest != $0.1.digest }.map { ItemRow($0.0, stored: $0.1) }
        if !unchanged.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(unchanged)
            bindings.append(generation)
            _ = try await PostgresIndex.rows("UPDATE searchlight_items SET generation = $2 WHERE uri = ANY($1::text[]) AND generation <> $2",
                                             bindings, on: connection)
        }
        // Deleted items go with their attribute rows; what they held leaves the statistics.
        if !deleted.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(Array(deleted))
            let sql = """
                DELETE FROM searchlight_items WHERE uri = ANY($1::text[])
                RETURNING name_positions, title_positions, text_positions, keyword_positions
                """
            for row in try await PostgresIndex.rows(sql, bindings, on: connection) {
                let (name, title, text, keywords) = try PostgresIndex.decode(row, as: (Int32, Int32, Int32, Int32).self)
                delta.subtract(name: Int(name), title: Int(title), text: Int(text), keywords: Int(keywords))
                result.deleted += 1
            }
        }
        let replacing = rows.filter { existing[$0.uri] != nil }
        let updated = replacing.isEmpty ? [] : try await update(replacing, storeUUID: storeUUID, generation: generation)
        for uri in updated {
            guard let old = existing[uri]?.positions else { continue }
            delta.subtract(name: old.name, title: old.title, text: old.text, keywords: old.keywords)
        }
        let fresh = rows.filter { !updated.contains($0.uri) }
        if !fresh.isEmpty { try await insert(fresh, storeUUID: storeUUID, generation: generation) }
        if !rows.isEmpty {
            // Attribute rows: a new item's, and an updated item's whose attributes changed (its old ones first).
            // Byte for byte, as the rows hold them: a value that changed only in its normalization changed.
            let reattributed = rows.filter { row in
                guard updated.contains(row.uri), let old = existing[row.uri] else { return false }
                return !BinaryCollation.equal(old.attributes, row.attributes)
            }
            if !reattributed.isEmpty {
                var bindings = PostgresBindings()
                bindings.append(reattributed.map(\.uri))
                _ = try await PostgresIndex.rows("DELETE FROM searchlight_attributes WHERE uri = ANY($1::text[])", bindings, on: connection)
            }
            try await insertAttributes(of: fresh + reattributed)
            try await insertTerms(of: rows)
        }
        for row in rows {
            delta.add(row)
            if updated.contains(row.uri) { result.updated += 1 } else { result.inserted += 1 }
        }
        result.unchanged = unchanged.count
        try await writeShownValues(batch)
        try await writeCheckpoint(batch.checkpoint, delta: delta)
        tokens[storeUUID] = batch.checkpoint.token
        return result
    }

    /// What a batch reads of an item's stored row before writing it.
    struct ExistingRow {
        var digest: String
        var attributes: String
        var positions: (name: Int, title: Int, text: Int, keywords: Int)
    }

    /// Every column of `searchlight_items` but the URI, from the unnested arrays `u` of ``rowBindings(_:storeUUID:generation:)``.
    private static let rowValues = """
        $2, u.entity, u.display_name, u.title, u.text, u.keywords,
        NULLIF(u.latitude, '')::double precision, NULLIF(u.longitude, '')::double precision,
        CASE WHEN u.latitude <> '' AND u.longitude <> ''
             THEN ST_SetSRID(ST_MakePoint(u.longitude::double precision, u.latitude::double precision), 4326)::geography END,
        NULLIF(u.date, '')::double precision, u.rank, u.value_lengths, u.attributes, u.digest,
        u.name_positions, u.title_positions, u.text_positions, u.keyword_positions, u.terms::tsvector, $20
        """
    private static let rowColumns = """
        store_uuid, entity, display_name, title, text, keywords, latitude, longitude, place, date,
        rank, value_lengths, attributes, digest, name_positions, title_positions, text_positions,
        keyword_positions, terms, generation
        """
    private static let unnestedRows = """
        unnest($1::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
               $11::float8[], $12::text[], $13::text[], $14::text[], $15::int4[], $16::int4[], $17::int4[], $18::int4[], $19::text[])
            AS u(uri, entity, display_name, title, text, keywords, latitude, longitude, date, rank, value_lengths, attributes, digest,
                 name_positions, title_positions, text_positions, keyword_positions, terms)
        """

    /// The rows' columns, each bound as an array ($1 the URIs, $2 the store, $20 the generation).
    private func rowBindings(_ rows: [ItemRow], storeUUID: String, generation: Int64) -> PostgresBindings {
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
        bindings.append(generation)
        return bindings
    }

    /// Inserts rows in one statement: each column bound as an array and unnested.
    private func insert(_ rows: [ItemRow], storeUUID: String, generation: Int64) async throws(PostgresIndexError) {
        let sql = "INSERT INTO searchlight_items (uri, \(Self.rowColumns)) SELECT u.uri, \(Self.rowValues) FROM \(Self.unnestedRows)"
        _ = try await PostgresIndex.rows(sql, rowBindings(rows, storeUUID: storeUUID, generation: generation), on: connection)
    }

    /// Updates stored rows in place, in one statement; returns the URIs it updated.
    private func update(_ rows: [ItemRow], storeUUID: String, generation: Int64) async throws(PostgresIndexError) -> Set<String> {
        let sql = """
            UPDATE searchlight_items AS i SET (\(Self.rowColumns)) = (\(Self.rowValues))
            FROM \(Self.unnestedRows) WHERE i.uri = u.uri RETURNING i.uri
            """
        var updated = Set<String>()
        for row in try await PostgresIndex.rows(sql, rowBindings(rows, storeUUID: storeUUID, generation: generation), on: connection) {
            updated.insert(try PostgresIndex.decode(row, as: String.self))
        }
        return updated
    }

    /// Inserts the rows' attribute values, one row each (their old ones deleted first, or gone with a deleted item's row).
    private func insertAttributes(of rows: [ItemRow]) async throws(PostgresIndexError) {
        let values = rows.flatMap { row in row.attributeRows.map { (row.uri, $0.name, $0.value) } }
        guard !values.isEmpty else { return }
        var bindings = PostgresBindings()
        bindings.append(values.map(\.0))
        bindings.append(values.map(\.1))
        bindings.append(values.map { Int16($0.2.kindCode) })
        bindings.append(values.map { $0.2.numberColumn ?? 0 })
        bindings.append(values.map { $0.2.textColumn ?? "" })
        for options in 1...3 { bindings.append(values.map { $0.2.textColumn.map { SearchIndex.fold($0, options: options) } ?? "" }) }
        _ = try await PostgresIndex.rows("""
            INSERT INTO searchlight_attributes (uri, name, kind, number, text, text_c, text_d, text_cd)
            SELECT u.uri, u.name, u.kind, CASE WHEN u.kind <> 0 THEN u.number END, CASE WHEN u.kind = 0 THEN u.text END,
                   CASE WHEN u.kind = 0 THEN u.c END, CASE WHEN u.kind = 0 THEN u.d END, CASE WHEN u.kind = 0 THEN u.cd END
            FROM unnest($1::text[], $2::text[], $3::int2[], $4::float8[], $5::text[], $6::text[], $7::text[], $8::text[])
                 AS u(uri, name, kind, number, text, c, d, cd)
            """, bindings, on: connection)
    }

    /// Adds the rows' terms that typo tolerance may reach (``TypoPlan/minimumTermLength`` scalars or
    /// more) to the term table, unless it holds them. Without a unique key nothing waits for another
    /// writer's uncommitted terms (a wait that could deadlock across batches of one transaction).
    private func insertTerms(of rows: [ItemRow]) async throws(PostgresIndexError) {
        var terms = Set<String>()
        for row in rows {
            for lexeme in row.vector.lexemes where lexeme.unicodeScalars.count >= TypoPlan.minimumTermLength { terms.insert(lexeme) }
        }
        guard !terms.isEmpty else { return }
        var bindings = PostgresBindings()
        bindings.append(Array(terms))
        _ = try await PostgresIndex.rows("""
            INSERT INTO searchlight_terms (term)
            SELECT t FROM unnest($1::text[]) AS u(t) WHERE NOT EXISTS (SELECT 1 FROM searchlight_terms s WHERE s.term = u.t)
            """, bindings, on: connection)
    }

    /// What related objects show the items that depend on them, kept with the batch that read them.
    private func writeShownValues(_ batch: IndexBatch) async throws(PostgresIndexError) {
        let storeUUID = batch.checkpoint.storeUUID
        if batch.forgetsStoreShownValues {
            var bindings = PostgresBindings()
            bindings.append(storeUUID)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_shown_values WHERE store_uuid = $1", bindings, on: connection)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_deferred_dependents WHERE store_uuid = $1", bindings, on: connection)
        }
        if !batch.forgottenShownValues.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(batch.forgottenShownValues)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_shown_values WHERE uri = ANY($1::text[])", bindings, on: connection)
        }
        let finished = batch.forgottenShownValues + batch.finishedDeferredDependents
        if !finished.isEmpty {
            var bindings = PostgresBindings()
            bindings.append(finished)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_deferred_dependents WHERE uri = ANY($1::text[])", bindings, on: connection)
        }
        try await save(batch.deferredDependents, into: "searchlight_deferred_dependents", column: "progress", storeUUID: storeUUID)
        try await save(batch.shownValues, into: "searchlight_shown_values", column: "digest", storeUUID: storeUUID)
    }

    /// Saves texts by related object's URI into `table`'s `column` (this file's own names), over those saved before.
    private func save(_ values: [String: String], into table: String, column: String, storeUUID: String) async throws(PostgresIndexError) {
        guard !values.isEmpty else { return }
        let sorted = values.sorted { $0.key < $1.key }
        var bindings = PostgresBindings()
        bindings.append(sorted.map(\.key))
        bindings.append(sorted.map(\.value))
        bindings.append(storeUUID)
        _ = try await PostgresIndex.rows("""
            INSERT INTO \(table) (uri, store_uuid, \(column)) SELECT u, $3, v FROM unnest($1::text[], $2::text[]) AS t(u, v)
            ON CONFLICT (uri) DO UPDATE SET \(column) = excluded.\(column), store_uuid = excluded.store_uuid
            """, bindings, on: connection)
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

    /// Removes every item of a store and its checkpoint, in one transaction; returns the items removed.
    /// The store is claimed first: its own writer, elsewhere, would otherwise write on into the void.
    @discardableResult
    public func removeStore(uuid: String) async throws(PostgresIndexError) -> Int {
        try await claim(storeUUID: uuid)
        return try await transaction { () async throws(PostgresIndexError) -> Int in
            _ = try await lockCheckpoint(uuid, tokens: [:])
            var bindings = PostgresBindings()
            bindings.append(uuid)
            let removed = try await PostgresIndex.value("WITH gone AS (DELETE FROM searchlight_items WHERE store_uuid = $1 RETURNING 1) SELECT count(*) FROM gone",
                                                        bindings, on: connection, as: Int64.self) ?? 0
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_shown_values WHERE store_uuid = $1", bindings, on: connection)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_deferred_dependents WHERE store_uuid = $1", bindings, on: connection)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_stores WHERE uuid = $1", bindings, on: connection)
            try await PostgresIndex.execute("COMMIT", on: connection)
            record([uuid: nil])
            return Int(removed)
        }
    }

    /// Starts a rebuild that keeps the store's items searchable: items written from now on carry the
    /// store's next generation, and ``sweep(keeping:)`` removes those that still carry an older one. The
    /// digests of what related objects show are forgotten, as the SQLite index forgets them.
    public func beginRebuild(storeUUID: String) async throws(PostgresIndexError) {
        try await transaction { () async throws(PostgresIndexError) in
            _ = try await lockCheckpoint(storeUUID, tokens: [:])
            var bindings = PostgresBindings()
            bindings.append(storeUUID)
            _ = try await PostgresIndex.rows("UPDATE searchlight_stores SET generation = generation + 1 WHERE uuid = $1", bindings, on: connection)
            _ = try await PostgresIndex.rows("DELETE FROM searchlight_shown_values WHERE store_uuid = $1", bindings, on: connection)
            // Walks of deferred dependents stay until the rebuild's last batch ends them (as in the SQLite index).
            try await PostgresIndex.execute("COMMIT", on: connection)
        }
    }

    /// Ends a rebuild: removes the store's items it did not write again and commits `checkpoint`, in one
    /// transaction. Returns the number of items removed.
    @discardableResult
    public func sweep(keeping checkpoint: StoreCheckpoint) async throws(PostgresIndexError) -> Int {
        try await transaction { () async throws(PostgresIndexError) -> Int in
            let uuid = checkpoint.storeUUID
            let generation = try await lockCheckpoint(uuid, tokens: [:])
            var bindings = PostgresBindings()
            bindings.append(uuid)
            bindings.append(generation)
            var delta = ItemRow.Statistics()
            let sql = """
                DELETE FROM searchlight_items WHERE store_uuid = $1 AND generation < $2
                RETURNING name_positions, title_positions, text_positions, keyword_positions
                """
            for row in try await PostgresIndex.rows(sql, bindings, on: connection) {
                let (name, title, text, keywords) = try PostgresIndex.decode(row, as: (Int32, Int32, Int32, Int32).self)
                delta.subtract(name: Int(name), title: Int(title), text: Int(text), keywords: Int(keywords))
            }
            try await writeCheckpoint(checkpoint, delta: delta)
            try await PostgresIndex.execute("COMMIT", on: connection)
            record([uuid: checkpoint.token])
            return -delta.items
        }
    }

    /// The digests saved with earlier batches of the related objects named, by URI.
    public func shownValues(for uris: [String]) async throws(PostgresIndexError) -> [String: String] {
        guard !uris.isEmpty else { return [:] }
        var bindings = PostgresBindings()
        bindings.append(uris)
        var found: [String: String] = [:]
        for row in try await index.rows("SELECT uri, digest FROM searchlight_shown_values WHERE uri = ANY($1::text[])", bindings) {
            let (uri, digest) = try PostgresIndex.decode(row, as: (String, String).self)
            found[uri] = digest
        }
        return found
    }

    /// The progress saved with earlier batches of one store's related objects whose dependents are still
    /// being re-indexed, by the object's URI.
    public func deferredDependents(storeUUID: String) async throws(PostgresIndexError) -> [String: String] {
        var bindings = PostgresBindings()
        bindings.append(storeUUID)
        var found: [String: String] = [:]
        for row in try await index.rows("SELECT uri, progress FROM searchlight_deferred_dependents WHERE store_uuid = $1", bindings) {
            let (uri, progress) = try PostgresIndex.decode(row, as: (String, String).self)
            found[uri] = progress
        }
        return found
    }

    /// Refreshes the planner's statistics after a bulk write (a first export of many items).
    public func optimize() async throws(PostgresIndexError) {
        try await exclusive { () async throws(PostgresIndexError) in
            try await PostgresIndex.execute("ANALYZE searchlight_items, searchlight_attributes, searchlight_terms", on: connection)
        }
    }

    /// Whether a URI is an object ID of the store (`x-coredata://<uuid>/…`, the UUID in any case): a
    /// writer holds only its stores' locks, so it must never write another store's items.
    static func belongs(_ uri: String, to storeUUID: String) -> Bool {
        let prefix = "x-coredata://"
        guard uri.hasPrefix(prefix) else { return false }
        let rest = uri.utf8.dropFirst(prefix.utf8.count)
        guard rest.count > storeUUID.utf8.count, rest[rest.index(rest.startIndex, offsetBy: storeUUID.utf8.count)] == UInt8(ascii: "/") else { return false }
        return String(decoding: rest.prefix(storeUUID.utf8.count), as: UTF8.self).caseInsensitiveCompare(storeUUID) == .orderedSame
    }
}
#endif
