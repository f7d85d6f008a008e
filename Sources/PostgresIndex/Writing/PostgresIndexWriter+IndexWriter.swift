#if PostgreSQL
import Dispatch
import PostgresNIO
import SearchIndex
import Synchronization

/// The writer as an exporter uses it: every call blocks the calling thread (an exporter's own thread,
/// never one of Swift's cooperative pool) until the server has answered.
extension PostgresIndexWriter {
    public func claim(storeUUID: String) throws(SearchIndexError) {
        try PostgresIndex.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.claim(storeUUID: storeUUID) }
    }

    public func checkpoints() throws(SearchIndexError) -> [StoreCheckpoint] {
        try PostgresIndex.blocking(watching: index.connection) { () async throws(PostgresIndexError) in try await self.index.checkpoints() }
    }

    public func checkpoint(storeUUID: String) throws(SearchIndexError) -> StoreCheckpoint? {
        try PostgresIndex.blocking(watching: index.connection) { () async throws(PostgresIndexError) in try await self.index.checkpoint(storeUUID: storeUUID) }
    }

    /// Applies the batches `next` gives in one transaction. They are sent as they come, so a commit of
    /// many pages never holds them all in memory; nothing is committed when any fails.
    @discardableResult
    public func apply(batchesFrom next: () throws -> IndexBatch?) throws(SearchIndexError) -> BatchResult {
        let transaction = try PostgresIndex.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.begin() }
        do {
            var total = BatchResult()
            while let batch = try next() {
                total.add(try PostgresIndex.blocking(watching: connection) { () async throws(PostgresIndexError) in try await transaction.write(batch) })
            }
            try PostgresIndex.blocking(watching: connection) { () async throws(PostgresIndexError) in try await transaction.commit() }
            return total
        } catch {
            _ = PostgresIndex.waiting(watching: connection) { () async throws(PostgresIndexError) in await transaction.rollBack() }
            if let error = error as? SearchIndexError { throw error }
            throw .backend(message: "the batches to write could not be made: \(error)", isTemporary: false)
        }
    }

    @discardableResult
    public func removeStore(uuid: String) throws(SearchIndexError) -> Int {
        try PostgresIndex.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.removeStore(uuid: uuid) }
    }

    public func beginRebuild(storeUUID: String) throws(SearchIndexError) {
        try PostgresIndex.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.beginRebuild(storeUUID: storeUUID) }
    }

    @discardableResult
    public func sweep(keeping checkpoint: StoreCheckpoint) throws(SearchIndexError) -> Int {
        try PostgresIndex.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.sweep(keeping: checkpoint) }
    }

    public func optimize() throws(SearchIndexError) {
        try PostgresIndex.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.optimize() }
    }

    /// Gives up every store's lock at once (not when the connection's close reaches the server) and closes
    /// the connection: a new writer, in this process or another, may claim the stores straight away.
    public func release() {
        _ = PostgresIndex.waiting(watching: connection) { () async throws(PostgresIndexError) in await self.close() }
    }

    /// Different machines write the database: one path may name different stores on each.
    public var identifiesStoresByPath: Bool { false }

    /// 1,000 objects: a page is half a dozen statements or more (the checkpoint locked and written, stored
    /// rows read, changed items updated, new items, attribute rows and terms inserted), each parsed, bound
    /// and answered over the connection; at 250 objects a catch-up of the full Corpus's country renames
    /// took 12% longer.
    public var catchUpPageSize: Int { 1_000 }

    /// Nothing to prepare: PostgreSQL replaces a row without reading the old text.
    public func prepareReplacements(of items: inout [PreparedItem]) throws(SearchIndexError) {}

    public func shownValues(for uris: [String]) throws(SearchIndexError) -> [String: String] {
        try PostgresIndex.blocking(watching: index.connection) { () async throws(PostgresIndexError) in try await self.shownValues(for: uris) }
    }

    public func deferredDependents(storeUUID: String) throws(SearchIndexError) -> [String: String] {
        try PostgresIndex.blocking(watching: index.connection) { () async throws(PostgresIndexError) in try await self.deferredDependents(storeUUID: storeUUID) }
    }

    /// Never stale: a database is not a file that can be deleted under its writer (a lost connection
    /// fails the next write instead).
    public func staleness() -> SearchIndexError? { nil }
}
#endif
