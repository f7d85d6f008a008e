import CoreDataStore
import Foundation
import SearchIndex

/// Follows a store's persistent history into the index, exactly once.
///
/// A first export pages through every indexed object from a recorded history token T0, then history
/// after T0 is replayed in batches. Every batch — export page or history — is one index transaction that
/// carries the new checkpoint, so a crash anywhere resumes exactly where the index says it is.
public final class Exporter {
    /// What a catch-up did: the facts of Core Spotlight's `indexDidUpdateNotification`, and more.
    public struct Summary: Sendable {
        /// The store caught up.
        public var store: IndexedStore
        public var inserted = 0, updated = 0, deleted = 0
        /// Items built again from history that turned out equal to what the index held (not written).
        public var unchanged = 0
        /// The history token reached.
        public var token: Int64 = 0
        /// Why everything was re-exported, if it was.
        public var rebuildReason: RebuildReason?
        /// Whether a first export ran.
        public var exported = false
        /// Whether a stop request ended the catch-up early (between batches: the index holds a whole
        /// batch and its token, and the next catch-up resumes from there).
        public var stopped = false
        /// The export a stop request left unfinished, with how far it came: the next catch-up resumes it.
        public var unfinished: ExportStatus?
        public var seconds = 0.0
        /// Values left out of items because they were not finite numbers (NaN, ±∞) or not coordinates: the
        /// items were indexed without them.
        public var omittedValues = 0

        /// An empty summary of a catch-up of `store`.
        public init(store: IndexedStore) { self.store = store }

        /// Whether the catch-up returned with walks of deferred dependents left (after its ``walkSlice``).
        public var walksLeft = false

        /// Whether the catch-up changed the index (or rebuilt it).
        public var changedIndex: Bool { inserted + updated + deleted > 0 || rebuildReason != nil }
    }

    let store: PersistentStore
    /// Where items go: an SQLite index file or another backend; the exporter does not know which.
    let index: any IndexWriter
    let configuration: ResolvedConfiguration
    let builder: ItemBuilder
    let batchSize: Int
    let storePath: String
    /// What items contain, as the checkpoint records it: the configuration's digest and the producers' versions.
    let configurationDigest: String
    /// The configuration as given, as JSON, kept with every checkpoint so a later run can reuse it.
    let configurationJSON: String
    /// Each entity's parent in the store's model, kept with the checkpoint for entity filters.
    let entityParents: [String: String]
    /// Which indexed objects show which related objects, and what: fixed by the configuration, so computed once.
    let digests: ShownValueDigests
    /// The roots whose tables hold indexed entities, in a fixed order.
    let roots: [String]
    /// The index's writer lock, when this exporter holds it alone (nil: its owner, an
    /// ``IndexingService`` writing several stores into one index, holds it).
    private let lock: WriterLock?

    /// When a catch-up with a long backlog gives way to a rebuild beside the index.
    public var rebuildPolicy = RebuildPolicy()

    /// Whether a related object whose change reaches more items than a page (a renamed country's places)
    /// has them re-indexed a page at a time beside the history after it (true, the default: a save behind
    /// a big rename waits for a page of it), or in the history batch that changed it, all visible at once
    /// (false: a save behind it waits for all of it; walks saved before still finish a page at a time).
    public var defersDependents = true

    /// How long a catch-up walks deferred dependents once history is written before it returns with walks
    /// left (``Summary/walksLeft``), so that a follower serves its other stores and requests between turns;
    /// nil (the default) walks until none is left. An object changed again faster than its walk goes round
    /// would otherwise keep one catch-up going.
    public var walkSlice: TimeInterval?

    /// Opens an exporter; takes the index's writer lock (a second exporter fails naming the first).
    ///
    /// - Parameters:
    ///   - store: The app's store, opened read-only.
    ///   - index: The index, opened read-write.
    ///   - configuration: What to index, resolved against the store's model.
    ///   - functions: The functions `FUNCTION(x, 'name:')` may call in the configuration's expressions.
    ///   - producers: Per entity name, code that reshapes or skips the item the configuration builds
    ///     (entities inherit their parent's producer).
    ///   - batchSize: Objects per index transaction.
    public convenience init(store: PersistentStore, index: SearchIndex, configuration: ResolvedConfiguration,
                            functions: FunctionRegistry = .standard, producers: [String: any ItemProducer] = [:],
                            batchSize: Int = 1_000) throws(ExportError) {
        let lock = try WriterLock(indexPath: index.path)
        self.init(store: store, index: index, configuration: configuration, functions: functions, producers: producers,
                  batchSize: batchSize, lock: lock)
    }

    /// An exporter writing under `lock`, or under a lock its owner holds (nil), or into a backend that
    /// enforces one writer per store itself (nil, the store claimed).
    init(store: PersistentStore, index: any IndexWriter, configuration: ResolvedConfiguration, functions: FunctionRegistry,
         producers: [String: any ItemProducer], batchSize: Int, lock: WriterLock?) {
        self.store = store
        self.index = index
        self.configuration = configuration
        self.builder = ItemBuilder(configuration: configuration, functions: functions, producers: producers)
        self.batchSize = max(1, batchSize)
        digests = ShownValueDigests(configuration: configuration, dependencies: builder.dependencies())
        roots = configuration.model.entities.filter { $0.superentityName == nil }.map(\.name).filter { root in
            configuration.model.hierarchy(from: root).contains { configuration.plans[$0] != nil }
        }
        configurationDigest = producers.isEmpty ? configuration.digest : FNV1a.hex(configuration.digest + " " + builder.producerDigest)
        configurationJSON = configuration.stored.json
        entityParents = Dictionary(store.model.entities.compactMap { entity in entity.superentityName.map { (entity.name, $0) } },
                                   uniquingKeysWith: { first, _ in first })
        storePath = URL(fileURLWithPath: store.path).standardizedFileURL.path
        self.lock = lock
    }

    /// Gives up the index's writer lock: the exporter must not be used afterwards. Lets a process open a
    /// new exporter on the same index (a store replaced under a follower) without waiting for this one's deinit.
    public func close() {
        lock?.release()
    }

    func checkpoint(token: Int64, tokenTimestamp: Date?, exportState: String?) -> StoreCheckpoint {
        StoreCheckpoint(storeUUID: store.metadata.storeUUID, storePath: storePath, token: token, modelDigest: store.metadata.modelDigest,
                        configurationDigest: configurationDigest, exportState: exportState, tokenTimestamp: tokenTimestamp,
                        configuration: configurationJSON, entityParents: entityParents)
    }

    /// Why the store's history is not the one the index followed up to `checkpoint`, or nil when it is:
    /// a store restored from a backup either ends before the token, or, saved since, has a different
    /// transaction under the token's number.
    private func divergence(from checkpoint: StoreCheckpoint, bounds: HistoryBounds) throws -> RebuildReason? {
        if checkpoint.token > bounds.newest {
            return .historyEndsBeforeToken(newest: bounds.newest, token: checkpoint.token)
        }
        guard checkpoint.token > 0, let recorded = checkpoint.tokenTimestamp,
              let actual = try store.timestamp(ofTransaction: checkpoint.token), actual != recorded else { return nil }
        return .historyRewritten(token: checkpoint.token, recorded: recorded, found: actual)
    }

    /// The store this exporter reads, as events name it.
    public var indexedStore: IndexedStore { IndexedStore(uuid: store.metadata.storeUUID, path: store.path) }

    /// Brings the index up to the store's newest transaction and returns what changed.
    ///
    /// `events` hears what happens on the way (a rebuild and why, a first export's progress after every
    /// transaction), in the calling task. Cancelling the task stops the catch-up between batches, never in the
    /// middle of one: the summary then says ``Summary/stopped``, and the next catch-up resumes where it ended.
    ///
    /// The work blocks on SQLite: it runs on threads of its own (one commits, one reads and builds the next
    /// pages), never on Swift's cooperative pool, and both have ended when this returns.
    @concurrent
    public func catchUp(rebuild: Bool = false, events: (IndexingEvent) -> Void = { _ in }) async throws(ExportError) -> Summary {
        let start = DispatchTime.now().uptimeNanoseconds
        var summary = Summary(store: indexedStore)
        do {
            try await ThreadExecutor.withExecutor(named: "searchlight commit") { executor in
                try await withTaskExecutorPreference(executor) {
                    try await self.catchUp(rebuild: rebuild, summary: &summary, events: events)
                }
            }
        } catch {
            throw ExportError(error)
        }
        summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return summary
    }

    /// The catch-up's stages, on the commit stage's thread.
    private func catchUp(rebuild: Bool, summary: inout Summary, events: (IndexingEvent) -> Void) async throws {
        let uuid = store.metadata.storeUUID
        // A store replaced at the same path: its old items go (where a path names one file: a database
        // that many machines write may hold another machine's store at the same path).
        let checkpoints = try index.checkpoints()
        for old in checkpoints where index.identifiesStoresByPath && old.storePath == storePath && old.storeUUID != uuid {
            let removed = try index.removeStore(uuid: old.storeUUID)
            events(.previousStoreRemoved(indexedStore, previousUUID: old.storeUUID, items: removed))
            summary.rebuildReason = .storeReplaced(previousUUID: old.storeUUID)
        }
        var existing = checkpoints.first { $0.storeUUID == uuid }
        // Two files with one UUID would take over each other's checkpoint and rebuild each other forever.
        if let other = existing, index.identifiesStoresByPath, other.storePath != storePath, FileManager.default.fileExists(atPath: other.storePath) {
            throw ExportError.duplicateStore(uuid: uuid, indexedPath: other.storePath, path: storePath)
        }
        var reason: RebuildReason? = rebuild ? .requested : nil
        if existing?.isRemovingItems == true {
            reason = .interruptedRemoval
        }
        if let current = existing, reason == nil {
            if current.modelDigest != store.metadata.modelDigest {
                reason = .modelChanged
            } else if current.configurationDigest != configurationDigest {
                reason = .configurationChanged
            } else if store.hasHistory, current.exportState == nil, let diverged = try divergence(from: current, bounds: try store.historyBounds()) {
                reason = diverged
            } else if store.hasHistory, current.exportState == nil, !(try store.historyBounds()).canResume(from: current.token) {
                reason = .historyPurged(token: current.token)
            } else if !store.hasHistory, current.exportState == nil {
                reason = .noHistory
            }
        }
        var rebuilding = false
        if let reason, let current = existing {
            events(.rebuildStarted(indexedStore, reason: reason))
            summary.rebuildReason = reason
            if current.isRemovingItems {
                // An index left by an earlier build mid-removal: finish removing, then export afresh.
                summary.deleted += try index.removeStore(uuid: uuid)
            } else {
                // Every object is written again over the old items, which stay searchable meanwhile;
                // those not written again (objects gone) are swept at the end.
                try index.beginRebuild(storeUUID: uuid)
                rebuilding = true
            }
            existing = nil
        }
        if existing == nil || existing?.exportState != nil {
            try await export(resuming: existing, rebuilding: rebuilding, summary: &summary, events: events)
            // The index's upkeep (the prefixes' answer lists, which an export only registers) runs while a
            // follower is idle; a store without history is never followed, so its export does it now.
            // Optional, as the follower's is: an error or a cancellation leaves lists stale (searches then
            // score every match), never fails the export it follows.
            if !store.hasHistory && !summary.stopped {
                while !Task.isCancelled, (try? index.maintain(budget: 1)) == true {}
            }
        }
        if store.hasHistory && !summary.stopped,
           let estimate = try await followHistory(summary: &summary, allowsRebuild: !summary.exported) {
            // The backlog costs more than writing the store again: rebuild beside the index (what
            // the catch-up wrote stays, as good as the rebuild's own writes), then follow on from there.
            let reason = RebuildReason.backlog(estimate)
            events(.rebuildStarted(indexedStore, reason: reason))
            summary.rebuildReason = reason
            try index.beginRebuild(storeUUID: uuid)
            try await export(resuming: nil, rebuilding: true, summary: &summary, events: events)
            if !summary.stopped { _ = try await followHistory(summary: &summary, allowsRebuild: false) }
        }
        // A configuration that changed nothing items contain (its saved searches, say) is still the one
        // the index now keeps, though no batch had to be written.
        if var kept = try index.checkpoint(storeUUID: uuid), kept.exportState == nil, kept.configuration != configurationJSON {
            kept.configuration = configurationJSON
            try index.apply(IndexBatch(checkpoint: kept))
        }
        let reached = try index.checkpoint(storeUUID: uuid)
        summary.token = reached?.token ?? 0
        summary.unfinished = reached.flatMap(ExportStatus.init(checkpoint:))
    }
}
