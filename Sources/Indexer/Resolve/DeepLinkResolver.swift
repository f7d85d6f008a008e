import CoreDataStore
import Foundation
import SearchIndex

/// Turns object-ID URIs back into the objects they name: the deep-link half of Searchlight.
///
/// Resolution happens in the source store, never in the index (the index holds what was searchable, the
/// store holds the object). With an index, each URI's store is the one the index recorded for that store
/// UUID, so one index shared by several stores resolves URIs of all of them.
public final class DeepLinkResolver {
    /// What became of one URI.
    public enum Resolution {
        /// The object, as it is in the store now.
        case found(ManagedObjectSnapshot)
        /// A well-formed URI of a known store whose object is not there (deleted, or never saved).
        case missing(uri: String, storePath: String)
        /// A URI that cannot name an object here.
        case failed(uri: String, problem: Problem)
    }

    /// Why a URI could not be looked up.
    public enum Problem: Error, CustomStringConvertible {
        /// Malformed, temporary, of another store or of an unknown entity.
        case invalidURI(CoreDataStoreError)
        /// The index records no store with this UUID.
        case unknownStore(uuid: String, indexPath: String)
        /// The store the index records could not be opened (moved, deleted, damaged).
        case storeUnavailable(uuid: String, error: CoreDataStoreError)
        /// The file at the path the index records is another store now.
        case storeReplaced(path: String, uuid: String, foundUUID: String)

        public var description: String {
            switch self {
            case .invalidURI(let error): error.description
            case .storeUnavailable(let uuid, let error): "\(error.description) (the index records it as store \(uuid))"
            case .storeReplaced(let path, let uuid, let found):
                "\(path) is now another store (UUID \(found), not \(uuid))"
            case .unknownStore(let uuid, let indexPath):
                "the index \(indexPath) holds no store with UUID \(uuid)"
            }
        }
    }

    private enum Source {
        case store(PersistentStore)
        case index(path: String, storePaths: [String: String], modelPath: String?)
    }

    private let source: Source
    /// Stores opened so far, by UUID (upper-cased: URI hosts are case-insensitive).
    private var opened: [String: Result<PersistentStore, Problem>] = [:]

    /// Resolves URIs in one store.
    public init(store: PersistentStore) {
        source = .store(store)
    }

    /// Resolves URIs in the stores an index records, opening each (with `modelPath`, if given) on first use.
    public init(index: any IndexReader, modelPath: String? = nil) throws(SearchIndexError) {
        let checkpoints = try index.checkpoints()
        source = .index(path: index.location, storePaths: Dictionary(checkpoints.map { ($0.storeUUID.uppercased(), $0.storePath) }, uniquingKeysWith: { first, _ in first }),
                        modelPath: modelPath)
    }

    /// Notes worth telling the user about the stores opened (how their models were found).
    public private(set) var notes: [PersistentStore.Note] = []

    /// Resolves every URI, in order: one bulk read per store, whatever the number of URIs.
    public func resolve(_ uris: [String]) throws(CoreDataStoreError) -> [Resolution] {
        var results: [Resolution?] = Array(repeating: nil, count: uris.count)
        var wanted: [String: [(position: Int, id: ManagedObjectID)]] = [:]
        var stores: [String: PersistentStore] = [:]
        for (position, uri) in uris.enumerated() {
            let id: ManagedObjectID
            do { id = try ManagedObjectID(uriRepresentation: uri) } catch {
                results[position] = .failed(uri: uri, problem: .invalidURI(error))
                continue
            }
            let store: PersistentStore
            switch self.store(for: id.storeUUID) {
            case .success(let found): store = found
            case .failure(let problem):
                results[position] = .failed(uri: uri, problem: problem)
                continue
            }
            do { try store.validate(id) } catch {
                results[position] = .failed(uri: uri, problem: .invalidURI(error))
                continue
            }
            stores[store.metadata.storeUUID] = store
            wanted[store.metadata.storeUUID, default: []].append((position, store.canonical(id)))
        }
        for (uuid, entries) in wanted {
            guard let store = stores[uuid] else { continue }
            let found = try store.objects(entries.map(\.id))
            for entry in entries {
                results[entry.position] = found[entry.id].map(Resolution.found) ?? .missing(uri: uris[entry.position], storePath: store.path)
            }
        }
        // Every position was set above: by a failure, or by its store's bulk read.
        return results.compactMap { $0 }
    }

    /// The store a URI's UUID names.
    private func store(for uuid: String) -> Result<PersistentStore, Problem> {
        switch source {
        case .store(let store):
            return .success(store) // a foreign UUID is reported by `validate`
        case .index(let indexPath, let storePaths, let modelPath):
            let key = uuid.uppercased()
            if let cached = opened[key] { return cached }
            guard let path = storePaths[key] else { return .failure(.unknownStore(uuid: uuid, indexPath: indexPath)) }
            var result = Result { () throws(CoreDataStoreError) -> PersistentStore in try PersistentStore(path: path, modelPath: modelPath) }
                .mapError { Problem.storeUnavailable(uuid: uuid, error: $0) }
            if case .success(let store) = result {
                notes += store.notes
                if store.metadata.storeUUID.uppercased() != key {
                    // The file at the recorded path is another store now: its objects are not these.
                    result = .failure(.storeReplaced(path: path, uuid: uuid, foundUUID: store.metadata.storeUUID))
                }
            }
            opened[key] = result
            return result
        }
    }
}
