import CoreDataStore
import Foundation
import SearchIndex

/// What the index holds for each store: per store, how far the index is and how far behind.
public struct IndexStatus: Sendable {
    /// One store the index holds.
    public struct Store: Sendable {
        public var checkpoint: StoreCheckpoint
        /// The store's newest transaction, when the store could be opened.
        public var newestTransaction: Int64?
        /// Why the store could not be read, if it could not.
        public var problem: String?
        /// Transactions not indexed yet; nil while an export is unfinished (its token says nothing then).
        public var lag: Int64? { export == nil ? newestTransaction.map { max(0, $0 - checkpoint.token) } : nil }
        /// The store's unfinished first export, rebuild or removal, if one is.
        public var export: ExportStatus? { ExportStatus(checkpoint: checkpoint) }
        /// Related objects whose dependents are still being re-indexed beside later history
        /// (``DeferredDependents``): the index is behind on them even at lag 0.
        public var deferredDependents = 0
    }

    public var statistics: IndexStatistics
    public var stores: [Store]
    /// The pid of the exporter writing the index file, if one is (nil for a backend that many exporters
    /// write, each holding its stores' locks in the database).
    public var writerPID: Int32?

    /// Reads the status of an index (and peeks at each store it holds, read-only).
    public static func read(index: any IndexReader) throws(SearchIndexError) -> IndexStatus {
        let statistics = try index.statistics()
        let stores = statistics.checkpoints.map { checkpoint -> Store in
            var store = Store.read(checkpoint)
            store.deferredDependents = statistics.deferredDependents[checkpoint.storeUUID] ?? 0
            return store
        }
        let writer = (index as? SearchIndex).flatMap { WriterLock.holder(indexPath: $0.path) }
        return IndexStatus(statistics: statistics, stores: stores, writerPID: writer)
    }

    /// The stores whose export is unfinished, with how far each is: what a search warns about. Reads
    /// only the index's checkpoints, so a search pays no store open for it.
    public static func unfinishedExports(index: any IndexReader) throws(SearchIndexError) -> [(storePath: String, export: ExportStatus)] {
        try index.checkpoints().compactMap { checkpoint in ExportStatus(checkpoint: checkpoint).map { (checkpoint.storePath, $0) } }
    }
}

extension IndexStatus.Store {
    /// A store as its checkpoint says, with its newest transaction when the store can be read here.
    static func read(_ checkpoint: StoreCheckpoint) -> Self {
        do {
            let store = try PersistentStore(path: checkpoint.storePath)
            // Another machine's store at the same path (an index many machines write), or a store replaced
            // since: its history says nothing about this one's lag.
            guard store.metadata.storeUUID.caseInsensitiveCompare(checkpoint.storeUUID) == .orderedSame else {
                return Self(checkpoint: checkpoint, problem: "the store at this path here is another one (UUID \(store.metadata.storeUUID)): "
                            + "this store was indexed from another machine, or replaced since")
            }
            return Self(checkpoint: checkpoint, newestTransaction: store.hasHistory ? try store.historyBounds().newest : nil)
        } catch {
            return Self(checkpoint: checkpoint, problem: "\(error)")
        }
    }
}

extension WriterLock {
    /// The pid holding the writer lock of an index, or nil when no exporter runs.
    static func holder(indexPath: String) -> Int32? {
        let descriptor = open(indexPath + ".lock", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 { flock(descriptor, LOCK_UN); return nil }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        return count > 0 ? Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) : -1
    }
}
