import CoreDataStore
import Foundation
import SearchIndex

extension Exporter {
    /// Everything needed to open an exporter, and to open it again when the store changes under a follower.
    public struct Source: Sendable {
        /// The app's store, opened read-only.
        public var storePath: String
        /// A model file to read it with instead of its `Z_MODELCACHE`.
        public var modelPath: String?
        /// What to index. nil: the configuration the index was built with for this store, else the
        /// zero-config defaults (an empty configuration, `{"entities": {}}`, asks for the defaults outright).
        public var configuration: IndexConfiguration?
        /// The index file.
        public var indexPath: String
        /// Objects per index transaction.
        public var batchSize: Int
        /// Whether the store must track persistent history (following needs it).
        public var requiresHistory: Bool

        /// Describes a source.
        public init(storePath: String, modelPath: String? = nil, configuration: IndexConfiguration? = nil, indexPath: String,
                    batchSize: Int = 1_000, requiresHistory: Bool = false) {
            self.storePath = storePath
            self.modelPath = modelPath
            self.configuration = configuration
            self.indexPath = indexPath
            self.batchSize = batchSize
            self.requiresHistory = requiresHistory
        }
    }

    /// Opens the store and the index, resolves the configuration against the store's model and takes the
    /// index's writer lock. A new index gets the store file's permissions: it mirrors private data.
    /// `note` hears what a user should know about the model choice.
    public static func open(_ source: Source, note: (String) -> Void = { _ in }) throws(ExportError) -> Exporter {
        let store: PersistentStore
        do { store = try PersistentStore(path: source.storePath, modelPath: source.modelPath) } catch { throw .store(error) }
        store.notes.forEach(note)
        if source.requiresHistory && !store.hasHistory { throw .historyNotTracked(path: source.storePath) }
        // The index must never be the store (or any other name of it): opening it read-write would write the app's file.
        if let storeFile = Self.identity(source.storePath), let indexFile = Self.identity(source.indexPath), storeFile == indexFile {
            throw .unsafeFile(path: source.indexPath, reason: "it is the store itself (\(source.storePath))")
        }
        // The resolved store's read and write bits (setuid, sticky and execute never carry over), always
        // readable and writable by the owner: a store on read-only media still gets an index its exporter can write.
        var info = stat()
        let storeMode = stat(source.storePath, &info) == 0 ? Int(info.st_mode & 0o777) : 0o600
        let permissions = (storeMode & 0o666) | 0o600
        let index: SearchIndex
        do { index = try SearchIndex(path: source.indexPath, mode: .readWrite(permissions: permissions)) } catch { throw .index(error) }
        let configuration = try resolveConfiguration(source, model: store.model, index: index, storeUUID: store.metadata.storeUUID, note: note)
        return try Exporter(store: store, index: index, configuration: configuration, batchSize: source.batchSize)
    }

    /// The configuration `open` would index `source` with, without opening anything for writing (what
    /// `--print-config` shows).
    public static func configuration(for source: Source, note: (String) -> Void = { _ in }) throws(ExportError) -> ResolvedConfiguration {
        let store: PersistentStore
        do { store = try PersistentStore(path: source.storePath, modelPath: source.modelPath) } catch { throw .store(error) }
        let index = source.configuration == nil && FileManager.default.fileExists(atPath: source.indexPath)
            ? try? SearchIndex(path: source.indexPath, mode: .readOnly) : nil
        return try resolveConfiguration(source, model: store.model, index: index, storeUUID: store.metadata.storeUUID, note: note)
    }

    /// The source's configuration; without one, the configuration the index was built with for this store
    /// (a restarted indexer keeps it rather than throwing a configured index away for the defaults).
    private static func resolveConfiguration(
        _ source: Source, model: ManagedObjectModel, index: SearchIndex?, storeUUID: String, note: (String) -> Void
    ) throws(ExportError) -> ResolvedConfiguration {
        var chosen = source.configuration
        if chosen == nil, let index {
            let stored: StoreCheckpoint?
            do { stored = try index.checkpoint(storeUUID: storeUUID) } catch { throw .index(error) }
            if let json = stored?.configuration {
                do { chosen = try IndexConfiguration(json: Data(json.utf8), path: "the configuration stored in \(source.indexPath)") }
                catch { throw .configuration(error.description) }
                if chosen?.entities.isEmpty == false {
                    note("using the configuration the index was built with (pass a configuration to change it)")
                }
            }
        }
        do { return try ResolvedConfiguration(chosen, model: model) } catch { throw .configuration(error.description) }
    }

    /// The device and inode of the file a path resolves to, nil when there is none.
    private static func identity(_ path: String) -> [UInt64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [UInt64(truncatingIfNeeded: info.st_dev), UInt64(truncatingIfNeeded: info.st_ino)]
    }

    /// Opens `source` again after ``FollowEnd/storeChanged(reason:)``, giving a file still being copied into
    /// place up to `patience` seconds to become a readable store; nil when `shouldStop` says so meanwhile.
    /// Call ``close()`` on the old exporter first: the new one takes the index's writer lock.
    public static func reopen(_ source: Source, patience: TimeInterval = 10, shouldStop: () -> Bool,
                              note: (String) -> Void = { _ in }) throws(ExportError) -> Exporter? {
        let deadline = Date().addingTimeInterval(patience)
        while true {
            do {
                return try open(source, note: note)
            } catch .store where Date() < deadline {
                if shouldStop() { return nil }
                usleep(200_000)
            }
        }
    }
}
