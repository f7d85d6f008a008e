import CoreDataStore
import Foundation
import SearchIndex

extension Exporter {
    /// Replays history after the checkpoint's token in batches, each committed with its token in one index
    /// transaction. A ``HistoryProducer`` (a child task on a thread of its own) reads, expands and prepares
    /// the next batch while the calling task commits. A cancelled task stops between batches.
    /// Returns the estimate that made it stop for a rebuild (see ``rebuildPolicy``), if it did.
    func followHistory(summary: inout Summary, allowsRebuild: Bool) async throws -> RebuildPolicy.Estimate? {
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
        let pages = PageQueue<HistoryPage>(capacity: 2)
        let producer = HistoryProducer(store: store, index: index, builder: builder, digests: digests, batchSize: batchSize,
                                       defersDependents: defersDependents, walkSlice: walkSlice)
        let deferred = try index.deferredDependents(storeUUID: start.storeUUID)
        return try await Self.withProducer(named: "searchlight history pages", pages, { producer.run(after: start.token, deferred: deferred, into: pages) }) {
            try commit(pages, from: start, summary: &summary, estimate: &estimate, allowsRebuild: allowsRebuild, began: began)
        }
    }

    /// The catch-up's commit stage: one index transaction per history batch, and per page of a deferred walk,
    /// until history ends with no walk left, the task is cancelled or the backlog is worth a rebuild (the
    /// estimate then).
    private func commit(_ pages: PageQueue<HistoryPage>, from start: StoreCheckpoint, summary: inout Summary, estimate: inout RebuildPolicy.Estimate,
                        allowsRebuild: Bool, began: UInt64) throws -> RebuildPolicy.Estimate? {
        var reached = (token: start.token, timestamp: start.tokenTimestamp)
        var finished = false
        // As in an export: a failure of the producer (the store's) is thrown as itself, after the pages
        // before it committed; pages of an unfinished history batch carry the token before it.
        var producerError: (any Error)?
        while !finished {
            if Task.isCancelled {
                // Stopped only if something was left: a catch-up that had reached the store's newest
                // transaction, with no deferred dependents left, is caught up, cancelled or not.
                summary.stopped = try store.historyBounds().newest > reached.token || (try hasWalks(start.storeUUID))
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
                // Pages before a batch's last carry the token before it: the last one's overwrites it (a page of
                // deferred dependents leaves it).
                if let end = page.end {
                    if let batchReached = end.reached { reached = (batchReached.token, batchReached.timestamp) }
                    batchEnded = true
                    changes = end.changes
                }
                var batch = IndexBatch(prepared: page.items, deletes: page.deletes,
                                       checkpoint: checkpoint(token: reached.token, tokenTimestamp: reached.timestamp, exportState: nil))
                batch.shownValues = page.end?.shownValues ?? [:]
                batch.forgottenShownValues = page.end?.forgottenShownValues ?? []
                batch.deferredDependents = page.end?.deferredDependents ?? [:]
                batch.finishedDeferredDependents = page.end?.finishedDeferredDependents ?? []
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
        // A producer that gave its slice up left walks for the next catch-up.
        if walkSlice != nil { summary.walksLeft = try hasWalks(start.storeUUID) }
        return nil
    }

    /// Whether the index holds walks of deferred dependents of the store, as committed.
    private func hasWalks(_ storeUUID: String) throws -> Bool {
        !(try index.deferredDependents(storeUUID: storeUUID).isEmpty)
    }
}
