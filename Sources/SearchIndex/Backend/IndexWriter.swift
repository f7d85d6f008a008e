import Foundation

/// Where an exporter writes: what every index backend does for it.
///
/// An SQLite index file (``SearchIndex``) and a PostgreSQL database (`PostgresIndexWriter`, in the
/// `PostgresIndex` module) both hold items and per-store checkpoints and apply batches atomically with
/// their checkpoint; the exporter writes through this protocol and never knows which one it has. Calls
/// block the calling thread (an exporter runs on threads of its own, never on Swift's cooperative pool).
public protocol IndexWriter: AnyObject, Sendable {
    /// Where the index is, as messages name it: a file path, or a URL without its password.
    var location: String { get }

    /// Takes the right to write one store's items: a backend that many processes write enforces one
    /// writer per store here; one that a single process writes (a file under a lock) has nothing to do.
    func claim(storeUUID: String) throws(SearchIndexError)

    /// Every store's checkpoint, by UUID.
    func checkpoints() throws(SearchIndexError) -> [StoreCheckpoint]

    /// The checkpoint of one store, or nil when the index holds nothing of it.
    func checkpoint(storeUUID: String) throws(SearchIndexError) -> StoreCheckpoint?

    /// Applies batches in order in one transaction, pulling each from `next` until it returns nil; each
    /// batch's checkpoint is written over the previous one. On any error nothing of any batch is written.
    @discardableResult
    func apply(batchesFrom next: () throws -> IndexBatch?) throws(SearchIndexError) -> BatchResult

    /// Removes every item of a store and its checkpoint; returns the number of items removed.
    @discardableResult
    func removeStore(uuid: String) throws(SearchIndexError) -> Int

    /// Starts a rebuild that keeps the store's items searchable: batches written from now on mark their
    /// items, and ``sweep(keeping:)`` removes the store's items that were not written again.
    func beginRebuild(storeUUID: String) throws(SearchIndexError)

    /// Ends a rebuild: removes the store's items it did not write again and commits `checkpoint`.
    @discardableResult
    func sweep(keeping checkpoint: StoreCheckpoint) throws(SearchIndexError) -> Int

    /// Makes later queries cheaper after a bulk write (merges segments, refreshes planner statistics).
    func optimize() throws(SearchIndexError)

    /// Upkeep that keeps later queries fast, done while the writer has nothing else to do, for about
    /// `budget` seconds at most; true when it did any. (The SQLite index lists its stale term leaders again.)
    @discardableResult
    func maintain(budget: TimeInterval) throws(SearchIndexError) -> Bool

    /// Does, for items about to be written, work the writer would otherwise do inside its transaction
    /// (see ``SearchIndex/prepareReplacements(of:)``); a backend with nothing to prepare leaves them.
    func prepareReplacements(of items: inout [PreparedItem]) throws(SearchIndexError)

    /// The digests saved with earlier batches (``IndexBatch/shownValues``) of the related objects named.
    func shownValues(for uris: [String]) throws(SearchIndexError) -> [String: String]

    /// The progress saved with earlier batches (``IndexBatch/deferredDependents``) of one store's related
    /// objects whose dependents are still being re-indexed, by the object's URI.
    func deferredDependents(storeUUID: String) throws(SearchIndexError) -> [String: String]

    /// Why this writer can no longer write where it did (its file deleted or replaced), or nil.
    func staleness() -> SearchIndexError?

    /// Gives up what ``claim(storeUUID:)`` took, at once: the writer must not be used afterwards.
    func release()

    /// Whether a store path names one file for every writer of the index (one machine's index file), so
    /// that a new store at an indexed path replaces the old one. False when many machines write the
    /// index: one path may name a different store on each.
    var identifiesStoresByPath: Bool { get }

    /// Objects per page of a catch-up: what suits this writer. Small pages reach the writer sooner and leave
    /// it sooner, so a batch waits less on its first and last (SQLite, whose cost per page is small); a
    /// writer that pays a fixed cost per page in statements and round trips (PostgreSQL) wants fewer,
    /// larger ones.
    var catchUpPageSize: Int { get }
}

extension IndexWriter {
    /// No upkeep: a backend that keeps nothing to refresh.
    @discardableResult
    public func maintain(budget: TimeInterval) throws(SearchIndexError) -> Bool { false }

    /// Applies upserts, deletes and the store's checkpoint in one transaction.
    @discardableResult
    public func apply(_ batch: IndexBatch) throws(SearchIndexError) -> BatchResult {
        var pending: IndexBatch? = batch
        return try apply(batchesFrom: { defer { pending = nil }; return pending })
    }
}

extension SearchIndex: IndexWriter {
    /// The index file's path.
    public var location: String { path }

    /// Nothing to take: one process writes an index file, under the writer lock beside it.
    public func claim(storeUUID: String) throws(SearchIndexError) {}

    /// Nothing to give up: the writer lock beside the file is its exporter's.
    public func release() {}

    /// One machine writes an index file: a path names one store.
    public var identifiesStoresByPath: Bool { true }

    /// 250 objects: a country's rename under a storm of saves is mostly a page's wait at each end of its
    /// batch (12 ms a 250-object page where a 1,000-object one took 40–50 ms; `searchbench storm`).
    public var catchUpPageSize: Int { 250 }

    /// Stores a facet column due (an attribute's values as the file keeps them for facets: none stored, or many
    /// items changed since), then lists stale term leaders again (the one-word answer lists), those held by the
    /// fewest rows first, for about `budget` seconds; true when it did any.
    @discardableResult
    public func maintain(budget: TimeInterval) throws(SearchIndexError) -> Bool {
        let (columnsDue, listsStale) = try read { db in
            (try !FacetColumn.dueColumns(db).isEmpty,
             try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM leader_terms WHERE stale = 1)") ?? false)
        }
        guard columnsDue || listsStale else { return false }
        return try write { db in
            let start = DispatchTime.now().uptimeNanoseconds
            let stored = columnsDue ? try FacetColumn.storeDue(db) : 0
            let left = budget - Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            // Lists wait for the next turn once the columns took the budget.
            let listed = listsStale && (stored == 0 || left > 0) ? try TermLeaders.refreshStale(db, budget: max(0, left)) : 0
            return stored + listed > 0
        }
    }

    /// Removes every item of a store and its checkpoint, in transactions of 10,000 items.
    @discardableResult
    public func removeStore(uuid: String) throws(SearchIndexError) -> Int { try removeStore(uuid: uuid, batchSize: 10_000) }

    /// Ends a rebuild, removing unmarked items in transactions of 10,000.
    @discardableResult
    public func sweep(keeping checkpoint: StoreCheckpoint) throws(SearchIndexError) -> Int { try sweep(keeping: checkpoint, batchSize: 10_000) }
}
