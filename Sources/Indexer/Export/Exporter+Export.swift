import CoreDataStore
import Foundation
import SearchIndex

extension Exporter {
    /// The most pages one first-export transaction commits.
    static let pagesPerTransaction = 8
    /// How long one first-export transaction goes on taking pages.
    static let transactionNanoseconds: UInt64 = 1_000_000_000

    /// Pages through every indexed object. Resumable: an ``ExportState`` rides in the checkpoint of every
    /// page, with the objects committed so far of those the store held when the export began (what
    /// `status` and `search` report while it runs). Reading and evaluating the next page (a ``PageProducer``,
    /// a child task on a thread of its own) overlaps committing this one (the calling task), pages committed
    /// strictly in order, so the export runs at about the index's write rate. A cancelled task stops after
    /// the transaction in hand.
    func export(resuming existing: StoreCheckpoint?, rebuilding: Bool, summary: inout Summary, events: (IndexingEvent) -> Void) async throws {
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
        let stopping = try await Self.withProducer(named: "searchlight export pages", pages, { producer.run(from: rootIndex, after: after, into: pages) }) {
            try commit(pages, report: &report, summary: &summary, exportedBefore: exportedBefore, objectCount: objectCount, started: started,
                       checkpoint: checkpoint(token: t0, tokenTimestamp: t0Timestamp, exportState: nil), sweeping: sweeping, events: events)
        }
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

    /// The export's commit stage: takes pages in order, several per index transaction, until the last one or
    /// a cancelled task. Returns whether it stopped before the last page.
    private func commit(_ pages: PageQueue<ExportPage>, report: inout ExportProgress, summary: inout Summary, exportedBefore: Int64,
                        objectCount: Int64, started: UInt64, checkpoint base: StoreCheckpoint, sweeping: Bool,
                        events: (IndexingEvent) -> Void) throws -> Bool {
        // Several pages per transaction: each commit costs a sync and a new full-text segment to merge. A
        // transaction ends after a few pages or a second, whichever comes first, and at a requested stop.
        var finished = false, stopping = false
        // The producer's failure (the store's) ends the transaction with the pages before it committed, and
        // is thrown as itself after: inside the index's transaction it would read as the index's.
        var producerError: (any Error)?
        // Walks of deferred dependents begun before the export (no catch-up runs beside it).
        let walks = Array(try index.deferredDependents(storeUUID: base.storeUUID).keys)
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
                if page.state != nil && Task.isCancelled { stopping = true }
                var checkpoint = base
                checkpoint.exportState = state?.text
                var batch = IndexBatch(prepared: page.items, checkpoint: checkpoint, marksRebuild: sweeping)
                batch.shownValues = page.shownValues
                batch.forgetsStoreShownValues = page.forgetsShownValues
                // The export's last page: it wrote every dependent a walk begun before it had left, so the walks
                // end with it (not when it begins: a rebuild interrupted before its first page must find them).
                if page.state == nil { batch.finishedDeferredDependents = walks }
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
        return stopping
    }

    /// Runs `produce` as a child task on a thread of its own beside `commit`, in the calling task: the two
    /// stages of an export or a catch-up. The producer is cancelled (through its queue) and awaited when
    /// `commit` returns or throws, so nothing it holds (a store read, a page being built) outlives them.
    static func withProducer<Page, T: Sendable>(named name: String, _ pages: PageQueue<Page>, _ produce: @escaping @Sendable () -> Void,
                                                commit: () throws -> T) async throws -> T {
        try await ThreadExecutor.withExecutor(named: name) { executor in
            try await withThrowingDiscardingTaskGroup { group in
                // Cancellation reaches the producer through the queue only: the commit stage decides when to
                // stop (between transactions), and a page it waits for must still come.
                group.addTask(executorPreference: executor) { produce() }
                defer { pages.cancel() }
                return try commit()
            }
        }
    }
}
