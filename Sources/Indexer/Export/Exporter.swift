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

        /// Whether the catch-up changed the index (or rebuilt it).
        public var changedIndex: Bool { inserted + updated + deleted > 0 || rebuildReason != nil }
    }

    let store: PersistentStore
    let index: SearchIndex
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
    /// The index's writer lock, when this exporter holds it alone (nil: its owner, an
    /// ``IndexingService`` writing several stores into one index, holds it).
    private let lock: WriterLock?

    /// When a catch-up with a long backlog gives way to a rebuild beside the index.
    public var rebuildPolicy = RebuildPolicy()

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

    /// An exporter writing under `lock`, or under a lock its owner holds (nil).
    init(store: PersistentStore, index: SearchIndex, configuration: ResolvedConfiguration, functions: FunctionRegistry,
         producers: [String: any ItemProducer], batchSize: Int, lock: WriterLock?) {
        self.store = store
        self.index = index
        self.configuration = configuration
        self.builder = ItemBuilder(configuration: configuration, functions: functions, producers: producers)
        self.batchSize = max(1, batchSize)
        digests = ShownValueDigests(configuration: configuration, dependencies: builder.dependencies())
        configurationDigest = producers.isEmpty ? configuration.digest : ResolvedConfiguration.fnv1a(configuration.digest + " " + builder.producerDigest)
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

    private func checkpoint(token: Int64, tokenTimestamp: Date?, exportState: String?) -> StoreCheckpoint {
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
    /// transaction); `shouldStop` is asked between batches, never in the middle of one.
    public func catchUp(rebuild: Bool = false, events: (IndexingEvent) -> Void = { _ in },
                        shouldStop: () -> Bool = { false }) throws(ExportError) -> Summary {
        let start = DispatchTime.now().uptimeNanoseconds
        var summary = Summary(store: indexedStore)
        do {
            let uuid = store.metadata.storeUUID
            // A store replaced at the same path: its old items go.
            let checkpoints = try index.checkpoints()
            for old in checkpoints where old.storePath == storePath && old.storeUUID != uuid {
                let removed = try index.removeStore(uuid: old.storeUUID)
                events(.previousStoreRemoved(indexedStore, previousUUID: old.storeUUID, items: removed))
                summary.rebuildReason = .storeReplaced(previousUUID: old.storeUUID)
            }
            var existing = checkpoints.first { $0.storeUUID == uuid }
            // Two files with one UUID would take over each other's checkpoint and rebuild each other forever.
            if let other = existing, other.storePath != storePath, FileManager.default.fileExists(atPath: other.storePath) {
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
                try export(resuming: existing, rebuilding: rebuilding, summary: &summary, events: events, shouldStop: shouldStop)
            }
            if store.hasHistory && !summary.stopped,
               let estimate = try followHistory(summary: &summary, allowsRebuild: !summary.exported, shouldStop: shouldStop) {
                // The backlog costs more than writing the store again: rebuild beside the index (what
                // the catch-up wrote stays, as good as the rebuild's own writes), then follow on from there.
                let reason = RebuildReason.backlog(estimate)
                events(.rebuildStarted(indexedStore, reason: reason))
                summary.rebuildReason = reason
                try index.beginRebuild(storeUUID: uuid)
                try export(resuming: nil, rebuilding: true, summary: &summary, events: events, shouldStop: shouldStop)
                if !summary.stopped { _ = try followHistory(summary: &summary, allowsRebuild: false, shouldStop: shouldStop) }
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
        } catch {
            throw ExportError(error)
        }
        summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return summary
    }

    /// The roots whose tables hold indexed entities, in a fixed order.
    private var roots: [String] {
        configuration.model.entities.filter { $0.superentityName == nil }.map(\.name).filter { root in
            configuration.model.hierarchy(from: root).contains { configuration.plans[$0] != nil }
        }
    }

    /// The most pages one first-export transaction commits.
    static let pagesPerTransaction = 8
    /// How long one first-export transaction goes on taking pages.
    static let transactionNanoseconds: UInt64 = 1_000_000_000

    /// Pages through every indexed object. Resumable: an ``ExportState`` rides in the checkpoint of every
    /// page, with the objects committed so far of those the store held when the export began (what
    /// `status` and `search` report while it runs). Reading and evaluating the next page overlaps
    /// committing this one (two threads, pages committed strictly in order), so the export runs at about
    /// the index's write rate.
    private func export(resuming existing: StoreCheckpoint?, rebuilding: Bool, summary: inout Summary, events: (IndexingEvent) -> Void,
                        shouldStop: () -> Bool) throws {
        summary.exported = true
        let resumed = ExportState(existing?.exportState)
        var t0 = resumed?.t0 ?? 0
        let sweeping = rebuilding || resumed?.sweep == true
        if resumed == nil, store.hasHistory {
            // T0 is read before the first page: anything saved after it is replayed from history.
            t0 = try store.historyBounds().newest
        }
        let t0Timestamp = store.hasHistory && t0 > 0 ? try store.timestamp(ofTransaction: t0) : nil
        let (rootIndex, after) = (resumed?.rootIndex ?? 0, resumed?.after ?? 0)
        // One COUNT per root table (milliseconds even at a million rows): what is left to read.
        let remaining = try store.read { snapshot throws in
            try roots.indices.dropFirst(rootIndex).reduce(0) { total, index in
                total + (try snapshot.count(ofEntity: roots[index], afterPrimaryKey: index == rootIndex ? after : 0))
            }
        }
        // A resumed export keeps counting from where it stopped, against what it had done plus what is left.
        let exportedBefore = resumed?.objectsExported ?? 0
        let objectCount = exportedBefore + Int64(remaining)
        let started = DispatchTime.now().uptimeNanoseconds
        var report = ExportProgress(objectsRead: 0, objectCount: remaining, itemsWritten: 0, entity: roots.indices.contains(rootIndex) ? roots[rootIndex] : "", elapsed: 0)
        events(.progress(indexedStore, report))
        let pages = PageQueue<ExportPage>(capacity: 2)
        let producer = PageProducer(store: store, builder: builder, digests: digests, roots: roots, batchSize: batchSize, t0: t0, sweeping: sweeping)
        let thread = ProducerThread(name: "searchlight export pages") { producer.run(from: rootIndex, after: after, into: pages) }
        defer {
            pages.cancel()
            thread.join()
        }
        // Several pages per transaction: each commit costs a sync and a new full-text segment to merge. A
        // transaction ends after a few pages or a second, whichever comes first, and at a requested stop.
        var finished = false, stopping = false
        // The producer's failure (the store's) ends the transaction with the pages before it committed, and
        // is thrown as itself after: inside the index's transaction it would read as the index's.
        var producerError: (any Error)?
        while !finished && !stopping {
            let began = DispatchTime.now().uptimeNanoseconds
            var pagesInTransaction = 0
            var written = 0, entity = report.entity
            let result = try index.apply(batchesFrom: { () throws -> IndexBatch? in
                guard pagesInTransaction < Self.pagesPerTransaction, !stopping,
                      pagesInTransaction == 0 || DispatchTime.now().uptimeNanoseconds - began < Self.transactionNanoseconds else { return nil }
                guard let page = pages.next(failure: &producerError) else {
                    finished = true
                    return nil
                }
                pagesInTransaction += 1
                report.objectsRead += page.objectCount
                var state = page.state
                state?.objectsExported = exportedBefore + Int64(report.objectsRead)
                state?.objectCount = objectCount
                summary.omittedValues += page.omittedValues
                written += page.items.count
                entity = page.entity
                // The page that ends the transaction carries the state to resume from.
                if page.state != nil && shouldStop() { stopping = true }
                var batch = IndexBatch(prepared: page.items, checkpoint: checkpoint(token: t0, tokenTimestamp: t0Timestamp, exportState: state?.text),
                                       marksRebuild: sweeping)
                batch.shownValues = page.shownValues
                batch.forgetsStoreShownValues = page.forgetsShownValues
                return batch
            })
            summary.inserted += result.inserted
            summary.updated += result.updated
            report.itemsWritten += written
            report.entity = entity
            report.elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            if pagesInTransaction > 0 { events(.progress(indexedStore, report)) }
        }
        if let producerError { throw producerError }
        if stopping {
            summary.stopped = true
            return
        }
        // A rebuild's last page leaves a sweep pending: only the sweep's last transaction ends the export.
        if sweeping {
            summary.deleted += try index.sweep(keeping: checkpoint(token: t0, tokenTimestamp: t0Timestamp, exportState: nil))
        }
        // One merged full-text segment makes every later query cheaper.
        if report.itemsWritten > 10_000 { try index.optimize() }
    }

    /// Replays history after the checkpoint's token in batches, each committed with its token in one index
    /// transaction. A ``HistoryProducer`` reads, expands and prepares the next batch on its own thread while
    /// this one commits.
    /// Returns the estimate that made it stop for a rebuild (see ``rebuildPolicy``), if it did.
    private func followHistory(summary: inout Summary, allowsRebuild: Bool, shouldStop: () -> Bool) throws -> RebuildPolicy.Estimate? {
        // Read once: every batch below commits the token it reached, so the next one starts there.
        guard let start = try index.checkpoint(storeUUID: store.metadata.storeUUID) else { return nil }
        let began = DispatchTime.now().uptimeNanoseconds
        // What the rebuild policy weighs: the backlog (one COUNT) and the store's size (one per root table),
        // read only when the backlog could be worth a rebuild.
        var estimate = RebuildPolicy.Estimate(elapsed: 0, changesDone: 0, changesLeft: 0, itemsWritten: 0, objectCount: 0)
        if allowsRebuild {
            estimate.changesLeft = try store.read { snapshot throws in try snapshot.changeCount(after: start.token) }
            if estimate.changesLeft >= rebuildPolicy.minimumChanges {
                estimate.objectCount = try store.read { snapshot throws in try roots.reduce(0) { $0 + (try snapshot.count(ofEntity: $1)) } }
            }
        }
        var reached = (token: start.token, timestamp: start.tokenTimestamp)
        let pages = PageQueue<HistoryPage>(capacity: 2)
        let producer = HistoryProducer(store: store, index: index, builder: builder, digests: digests, batchSize: batchSize)
        let thread = ProducerThread(name: "searchlight history pages") { producer.run(after: start.token, into: pages) }
        defer {
            pages.cancel()
            thread.join()
        }
        var finished = false
        // As in an export: a failure of the producer (the store's) is thrown as itself, after the pages
        // before it committed; pages of an unfinished history batch carry the token before it.
        var producerError: (any Error)?
        while !finished {
            if shouldStop() {
                summary.stopped = true
                return nil
            }
            var changes = 0
            var batchEnded = false
            let result = try index.apply(batchesFrom: { () throws -> IndexBatch? in
                guard !batchEnded else { return nil }
                guard let page = pages.next(failure: &producerError) else {
                    finished = true
                    return nil
                }
                summary.omittedValues += page.omittedValues
                // Pages before a batch's last carry the token before it: the last one's overwrites it.
                if let end = page.end {
                    reached = (end.token, end.timestamp)
                    batchEnded = true
                    changes = end.changes
                }
                var batch = IndexBatch(prepared: page.items, deletes: page.deletes,
                                       checkpoint: checkpoint(token: reached.token, tokenTimestamp: reached.timestamp, exportState: nil))
                batch.shownValues = page.end?.shownValues ?? [:]
                batch.forgottenShownValues = page.end?.forgottenShownValues ?? []
                return batch
            })
            summary.inserted += result.inserted
            summary.updated += result.updated
            summary.deleted += result.deleted
            summary.unchanged += result.unchanged
            estimate.changesDone += changes
            estimate.changesLeft = max(0, estimate.changesLeft - changes)
            estimate.itemsWritten += result.inserted + result.updated + result.unchanged + result.deleted
            estimate.elapsed = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
            if allowsRebuild && estimate.objectCount > 0 && rebuildPolicy.prefersRebuild(estimate) { return estimate }
        }
        if let producerError { throw producerError }
        return nil
    }
}

extension Exporter {
    /// Builds the items of `ids` again from the store as it is now, and writes them with the checkpoint the
    /// index holds (a later catch-up replays history over them as over any item). Objects gone from the store,
    /// or left out by an ``ItemProducer``, lose their items; objects of entities that are not indexed are
    /// ignored. A store not exported yet is caught up instead, which writes every object.
    public func reindex(_ ids: [ManagedObjectID]) throws(ExportError) -> Summary {
        let start = DispatchTime.now().uptimeNanoseconds
        var summary = Summary(store: indexedStore)
        do {
            guard let checkpoint = try index.checkpoint(storeUUID: store.metadata.storeUUID), checkpoint.exportState == nil else {
                return try catchUp()
            }
            let wanted = Set(ids.map(store.canonical)).filter { configuration.plans[$0.entityName] != nil }
                .sorted { ($0.entityName, $0.primaryKey) < ($1.entityName, $1.primaryKey) }
            let producer = HistoryProducer(store: store, index: index, builder: builder, digests: digests, batchSize: batchSize)
            for first in stride(from: 0, to: wanted.count, by: batchSize) {
                let chunk = wanted[first..<min(first + batchSize, wanted.count)]
                let page = try store.read { snapshot throws in try producer.page(chunk, changed: Set(chunk), in: snapshot) }
                let result = try index.apply(IndexBatch(prepared: page.items, deletes: page.deletes, checkpoint: checkpoint))
                summary.inserted += result.inserted
                summary.updated += result.updated
                summary.deleted += result.deleted
                summary.unchanged += result.unchanged
                summary.omittedValues += page.omittedValues
            }
            summary.token = checkpoint.token
        } catch {
            throw ExportError(error)
        }
        summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return summary
    }
}
