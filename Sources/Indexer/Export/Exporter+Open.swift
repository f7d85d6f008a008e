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
        /// The functions `FUNCTION(x, 'name:')` may call in the configuration's expressions.
        public var functions: FunctionRegistry
        /// Per entity name, code that reshapes or skips the item the configuration builds.
        public var producers: [String: any ItemProducer]

        /// Describes a source.
        public init(storePath: String, modelPath: String? = nil, configuration: IndexConfiguration? = nil, indexPath: String,
                    batchSize: Int = 1_000, requiresHistory: Bool = false, functions: FunctionRegistry = .standard,
                    producers: [String: any ItemProducer] = [:]) {
            self.storePath = storePath
            self.modelPath = modelPath
            self.configuration = configuration
            self.indexPath = indexPath
            self.batchSize = batchSize
            self.requiresHistory = requiresHistory
            self.functions = functions
            self.producers = producers
        }
    }

    /// Opens the store and the index, resolves the configuration against the store's model and takes the
    /// index's writer lock. A new index gets the store file's permissions: it mirrors private data.
    /// `events` hears notices about how the store is read and which configuration is used.
    public static func open(_ source: Source, events: (IndexingEvent) -> Void = { _ in }) throws(ExportError) -> Exporter {
        try checkIndexIsNotStore(indexPath: source.indexPath, storePath: source.storePath)
        let lock = try WriterLock(indexPath: source.indexPath)
        let index = try openIndex(source.indexPath, mirroring: source.storePath)
        return try open(source, index: index, lock: lock, events: events)
    }

    /// Opens the index at `indexPath` for writing, created with the permissions of the store at `storePath`:
    /// its read and write bits (setuid, sticky and execute never carry over), always readable and writable
    /// by the owner, so a store on read-only media still gets an index its exporter can write.
    static func openIndex(_ indexPath: String, mirroring storePath: String, busyTimeout: TimeInterval = 10) throws(ExportError) -> SearchIndex {
        var info = stat()
        let storeMode = stat(storePath, &info) == 0 ? Int(info.st_mode & 0o777) : 0o600
        do { return try SearchIndex(path: indexPath, mode: .readWrite(permissions: (storeMode & 0o666) | 0o600), busyTimeout: busyTimeout) }
        catch { throw .index(error) }
    }

    /// Opens the source's store and an exporter of it into `index`, writing under `lock` (nil: the caller
    /// holds the index's writer lock).
    static func open(_ source: Source, index: any IndexWriter, lock: WriterLock?, events: (IndexingEvent) -> Void) throws(ExportError) -> Exporter {
        let store: PersistentStore
        do { store = try PersistentStore(path: source.storePath, modelPath: source.modelPath) } catch { throw .store(error) }
        for note in store.notes { events(.notice(.store(path: source.storePath, note))) }
        if source.requiresHistory && !store.hasHistory { throw .historyNotTracked(path: source.storePath) }
        try checkIndexIsNotStore(indexPath: source.indexPath, storePath: source.storePath)
        // Before the configuration is read from the index: the store's writer decides which one is kept.
        do { try index.claim(storeUUID: store.metadata.storeUUID) } catch { throw .index(error) }
        let configuration = try resolveConfiguration(source, model: store.model, index: index, storeUUID: store.metadata.storeUUID, events: events)
        return Exporter(store: store, index: index, configuration: configuration, functions: source.functions, producers: source.producers,
                        batchSize: source.batchSize, lock: lock)
    }

    /// The configuration `open` would index `source` with, without opening anything for writing (what
    /// a command line prints as the effective configuration).
    public static func configuration(for source: Source, events: (IndexingEvent) -> Void = { _ in }) throws(ExportError) -> ResolvedConfiguration {
        let store: PersistentStore
        do { store = try PersistentStore(path: source.storePath, modelPath: source.modelPath) } catch { throw .store(error) }
        let index = source.configuration == nil && FileManager.default.fileExists(atPath: source.indexPath)
            ? try? SearchIndex(path: source.indexPath, mode: .readOnly) : nil
        return try resolveConfiguration(source, model: store.model, index: index, storeUUID: store.metadata.storeUUID, events: events)
    }

    /// The source's configuration; without one, the configuration the index was built with for this store
    /// (a restarted indexer keeps it rather than throwing a configured index away for the defaults).
    private static func resolveConfiguration(
        _ source: Source, model: ManagedObjectModel, index: (any IndexWriter)?, storeUUID: String, events: (IndexingEvent) -> Void
    ) throws(ExportError) -> ResolvedConfiguration {
        var chosen = source.configuration
        if chosen == nil, let index {
            let stored: StoreCheckpoint?
            do { stored = try index.checkpoint(storeUUID: storeUUID) } catch { throw .index(error) }
            if let json = stored?.configuration {
                do { chosen = try IndexConfiguration(json: Data(json.utf8), path: "the configuration stored in \(source.indexPath)") }
                catch { throw .configuration(error.description) }
                if chosen?.entities.isEmpty == false {
                    events(.notice(.storedConfigurationUsed(path: source.storePath)))
                }
            }
        }
        do { return try ResolvedConfiguration(chosen, model: model, functions: source.functions) } catch { throw .configuration(error.description) }
    }

    /// Refuses an index that is the store (or any other name of it): opening it read-write, or a lock beside
    /// it, would write into the app's folder for nothing, and writing it would write the app's file.
    static func checkIndexIsNotStore(indexPath: String, storePath: String) throws(ExportError) {
        if let storeFile = FileIdentity(path: storePath), storeFile == FileIdentity(path: indexPath) {
            throw .indexIsStore(index: indexPath, store: storePath)
        }
    }
}
