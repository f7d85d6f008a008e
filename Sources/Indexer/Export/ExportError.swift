import CoreDataStore
import Foundation
import SearchIndex

/// Why an export stopped: the facts, and a description in plain words.
public enum ExportError: Error, Sendable, CustomStringConvertible {
    case store(CoreDataStoreError)
    case index(SearchIndexError)
    case configuration(String)
    /// Another exporter writes this index.
    case lock(path: String, holder: Int32?, reason: String?)
    /// A file Searchlight would write is not one it may safely write (a symbolic link, another user's
    /// file, a hard link to something else): writing it could clobber a file elsewhere.
    case unsafeFile(path: String, reason: String)
    /// The index path names the store itself (or another name of its file): writing it would write the app's store.
    case indexIsStore(index: String, store: String)
    /// A store whose UUID the index already follows at another path that still exists: a copy of it.
    case duplicateStore(uuid: String, indexedPath: String, path: String)
    /// The service already runs: a catch-up is under way (or it follows its stores, for a catch-up).
    case alreadyRunning
    /// A run ended before it served a request (``IndexingService/reindex(uris:)`` then serves it by a run of
    /// its own, so callers do not see this).
    case stopped
    /// One store was given twice: two names of one file, or a copy of it (same store UUID).
    case storeGivenTwice(path: String, other: String, sameFile: Bool)
    /// An object ID names a store the service does not index.
    case unknownStore(uuid: String)
    /// Following needs history the store does not track.
    case historyNotTracked(path: String)
    /// Something failed that none of the cases above explains: a bug, not bad input.
    case internalFailure(String)

    public var description: String {
        switch self {
        case .store(let error): error.description
        case .index(let error): error.description
        case .configuration(let message): message
        case .lock(let path, let holder, let reason):
            if let reason { "cannot take the writer lock \(path): \(reason)" }
            else if holder == getpid() {
                // flock refuses a second descriptor of this process too: an IndexingService or Exporter already open.
                "this process already writes this index (an IndexingService or Exporter is open on it); stop or close it first"
            } else { "another process (pid \(holder.map(String.init) ?? "unknown")) is writing this index; wait for it or stop it" }
        case .unsafeFile(let path, let reason):
            "refusing to write \(path): \(reason); remove it (it is not Searchlight's) and try again"
        case .indexIsStore(let index, let store):
            "\(index) is the store \(store) itself; choose another path for the index"
        case .duplicateStore(let uuid, let indexedPath, let path):
            "\(path) has the UUID \(uuid) of \(indexedPath), which this index already follows: it is a copy of that store; "
                + "index the copy into an index of its own, or move the original away first"
        case .internalFailure(let message):
            "internal error: \(message); this is a Searchlight bug: please report it"
        case .alreadyRunning:
            "the service is already indexing; wait for its run to end"
        case .stopped:
            "the service's run ended before it served the request; ask again"
        case .storeGivenTwice(let path, let other, let sameFile):
            sameFile ? "\(path) and \(other) are one store file; give it once"
                : "\(path) is a copy of \(other) (the same store UUID); index the copy into an index of its own"
        case .unknownStore(let uuid):
            "no store with UUID \(uuid) is indexed here; add that store to the ones indexed, or check the URI's store UUID"
        case .historyNotTracked(let path):
            "\(path) has no persistent history, so its changes cannot be followed; turn on NSPersistentHistoryTrackingKey in the app's store description (a catch-up without following re-exports everything each time)"
        }
    }
}

extension ExportError {
    /// The error as an export reports it: the store's and the index's own errors wrapped, anything else
    /// (not bad input) an internal failure.
    init(_ error: any Error) {
        switch error {
        case let error as ExportError: self = error
        case let error as CoreDataStoreError: self = .store(error)
        case let error as SearchIndexError: self = .index(error)
        default: self = .internalFailure("\(error)")
        }
    }
}
