import CoreDataStore
import Foundation
import SearchIndex

/// A store an event is about: its UUID (the host of its object-ID URIs) and the path it was opened at.
public struct IndexedStore: Sendable, Hashable, CustomStringConvertible {
    /// The store's UUID.
    public var uuid: String
    /// The store's path, as given.
    public var path: String

    /// Names a store.
    public init(uuid: String, path: String) {
        self.uuid = uuid
        self.path = path
    }

    public var description: String { path }
}

/// Something that happened while indexing, in the order it happened.
///
/// ``IndexingService/events`` delivers them to an app; ``Exporter/catchUp(rebuild:events:)``
/// hands those of one catch-up to a closure.
public enum IndexingEvent: Sendable {
    /// A catch-up changed the index, or rebuilt it: Core Spotlight's `indexDidUpdateNotification`, with the
    /// store and the history token the index now holds for it.
    case indexDidUpdate(Exporter.Summary)
    /// A store's first catch-up of a run ended (even one that changed nothing): the index holds everything
    /// the store held when it began, unless `stopped` says a stop request cut it short.
    case caughtUp(Exporter.Summary)
    /// A store's items are being written again from scratch; the old ones stay searchable meanwhile.
    case rebuildStarted(IndexedStore, reason: RebuildReason)
    /// The items of the store that was at a path before (another UUID) were removed.
    case previousStoreRemoved(IndexedStore, previousUUID: String, items: Int)
    /// How far a first export (or rebuild) has come, after every transaction.
    case progress(IndexedStore, ExportProgress)
    /// The store file was replaced or migrated under the follower, which opens it again.
    case storeChanged(path: String, change: PersistentStore.Change)
    /// The file at `path` (a store, or the index) has been locked by another process since `since`; indexing
    /// retries until it is free.
    case stalled(path: String, since: Date)
    /// Indexing of the store at `path` goes on after a stall.
    case resumed(path: String)
    /// Something a person configuring the indexer should know; nothing failed.
    case notice(IndexingNotice)
    /// The service stopped: on request (`error` nil) or because of an error it cannot get past.
    case stopped(error: ExportError?)
}

/// What a person configuring the indexer should know; nothing failed.
public enum IndexingNotice: Sendable, Equatable, CustomStringConvertible {
    /// How the store at `path` is read, or what its model lacks.
    case store(path: String, PersistentStore.Note)
    /// No configuration was given, so the one the index was built with for this store is used.
    case storedConfigurationUsed(path: String)
    /// File-change notifications are unavailable: the stores are polled.
    case polling(interval: TimeInterval)
    /// Values that were not finite numbers (NaN, ±∞) were left out of their items, which were indexed
    /// without them.
    case valuesOmitted(count: Int)

    public var description: String {
        switch self {
        case .store(let path, let note): "\(path): \(note)"
        case .storedConfigurationUsed: "using the configuration the index was built with"
        case .polling(let interval): "file-change notifications are unavailable here: polling every \(Int(interval * 1000)) ms"
        case .valuesOmitted(let count):
            "\(count) value\(count == 1 ? " was" : "s were") not finite numbers (NaN or infinite) and left out of their items; "
                + "the items were indexed without them"
        }
    }
}
