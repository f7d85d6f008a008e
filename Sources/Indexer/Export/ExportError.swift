import CoreDataStore
import SearchIndex

/// Why an export stopped, phrased for the person at the terminal.
public enum ExportError: Error, Sendable, CustomStringConvertible {
    case store(CoreDataStoreError)
    case index(SearchIndexError)
    case configuration(String)
    /// Another exporter writes this index.
    case lock(path: String, holder: Int32?, reason: String?)
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
            else { "another searchctl index (pid \(holder.map(String.init) ?? "unknown")) is writing this index; wait for it or stop it" }
        case .internalFailure(let message):
            "internal error: \(message); this is a Searchlight bug: please report it with the command you ran"
        case .historyNotTracked(let path):
            "\(path) has no persistent history, so --follow cannot see changes; turn on NSPersistentHistoryTrackingKey in the app's store description (index without --follow re-exports everything each run)"
        }
    }
}
