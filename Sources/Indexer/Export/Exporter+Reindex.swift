import CoreDataStore
import Foundation
import SearchIndex

extension Exporter {
    /// Builds the items of `ids` again from the store as it is now, and writes them with the checkpoint the
    /// index holds (a later catch-up replays history over them as over any item). Objects gone from the store,
    /// or left out by an ``ItemProducer``, lose their items; objects of entities that are not indexed are
    /// ignored. A store not exported yet is caught up instead, which writes every object.
    ///
    /// `events` and cancellation serve that catch-up as they serve ``catchUp(rebuild:events:)``; like it, the
    /// work runs on a thread of its own.
    @concurrent
    public func reindex(_ ids: [ManagedObjectID], events: (IndexingEvent) -> Void = { _ in }) async throws(ExportError) -> Summary {
        let start = DispatchTime.now().uptimeNanoseconds
        let written = try await ThreadExecutor.withExecutor(named: "searchlight reindex") { executor throws(ExportError) in
            try await withTaskExecutorPreference(executor) { () throws(ExportError) in try self.rebuildItems(of: ids) }
        }
        guard var summary = written else { return try await catchUp(events: events) }
        summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return summary
    }

    /// Builds and writes the items of `ids`, on the reindex's thread, a batch per transaction (all of them: the
    /// request is bounded, and one made before a stop is still served); nil when the store has not been
    /// exported yet.
    private func rebuildItems(of ids: [ManagedObjectID]) throws(ExportError) -> Summary? {
        var summary = Summary(store: indexedStore)
        do {
            guard let checkpoint = try index.checkpoint(storeUUID: store.metadata.storeUUID), checkpoint.exportState == nil else { return nil }
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
        return summary
    }
}
