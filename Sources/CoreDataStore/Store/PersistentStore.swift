import Foundation
import GRDB

/// A Core Data SQLite store opened for reading, exactly as Core Data exposes it: its metadata, its
/// model, its objects and its persistent history.
///
/// The store is opened read-only and never written, locked for writing or checkpointed, so it is safe
/// beside a running app. Every read runs in one short read transaction (one WAL snapshot); use
/// ``read(_:)`` to make several reads that must agree with each other.
public final class PersistentStore: Sendable {
    /// The store file's path.
    public let path: String
    /// The store's metadata (`Z_METADATA`).
    public let metadata: StoreMetadata
    /// The model the reader maps rows with, and where it came from.
    public let model: ManagedObjectModel
    /// How the model maps onto the store's tables.
    package let layout: StoreLayout
    /// Whether the store tracks persistent history.
    public let hasHistory: Bool
    /// What is worth telling a user about how the store is read (e.g. that its model was inferred).
    public let notes: [Note]

    /// The connection, which leaves the at-rest mode by itself when an app opens the store.
    let connection: StoreConnection
    /// How the pages were reached when the store was opened (shared WAL reader, immutable at rest, private copy).
    let access: Access
    /// The file's identity when opened: a follower compares it to notice a store replaced at its path.
    let fileIdentity: FileIdentity?
    let entityNameByNumber: [Int: String]
    let tableReaders: [String: TableReader]
    let catalog: StoreCatalog

    /// How many `ZTOMBSTONE` columns the store's `ACHANGE` table has (what a writer of its history fills).
    package var historyTombstoneColumnCount: Int {
        (catalog.tables["ACHANGE"] ?? []).filter { $0.name.hasPrefix("ZTOMBSTONE") }.count
    }

    /// Opens a store for reading.
    ///
    /// - Parameters:
    ///   - path: The `.sqlite` file. Its `-wal` and `-shm` companions are used as they are.
    ///   - modelPath: A model file to use instead of the store's own `Z_MODELCACHE`. It must describe
    ///     the store: differences are reported precisely as ``CoreDataStoreError/modelMismatch(differences:)``.
    public init(path: String, modelPath: String? = nil) throws(CoreDataStoreError) {
        self.path = path
        let database: DatabaseQueue
        (database, catalog, access) = try Self.open(path: path)
        connection = StoreConnection(queue: database, access: access, path: path)
        fileIdentity = FileIdentity(path: path)
        metadata = try StoreMetadata(storeUUID: catalog.storeUUID, plist: catalog.metadataPlist)
        hasHistory = catalog.hasHistory

        var notes: [Note] = []
        switch access {
        case .readOnlyMedia:
            notes.append(.readAsImmutable)
        case .privateCopy:
            notes.append(.readFromPrivateCopy)
        case .shared, .atRest:
            break
        }
        let cachedModel: ManagedObjectModel? = try catalog.modelCache.map { data throws(CoreDataStoreError) in
            try ManagedObjectModel(modelCache: data)
        }
        var chosen: ManagedObjectModel
        if let modelPath {
            chosen = try ManagedObjectModel(contentsOf: modelPath)
            let differences = Self.differences(model: chosen, cachedModel: cachedModel, catalog: catalog, metadata: metadata)
            guard differences.isEmpty else { throw .modelMismatch(differences: differences) }
        } else if let cachedModel {
            chosen = cachedModel
        } else {
            chosen = try ManagedObjectModel(inferringFrom: catalog)
            notes.append(.modelInferred)
        }
        model = chosen
        layout = StoreLayout(model: chosen, entityNumbers: catalog.entityNumbers(for: chosen),
                             schema: catalog.tables.mapValues { $0.map(\.name) })
        if !layout.unresolvedRelationships.isEmpty {
            notes.append(.unresolvedRelationships(layout.unresolvedRelationships))
        }
        self.notes = notes
        entityNameByNumber = Dictionary(layout.entityNumbers.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        var readers: [String: TableReader] = [:]
        for (root, table) in layout.tables {
            guard let columns = catalog.tables[table.name] else {
                if chosen.source == .modelCache {
                    throw .unsupportedStore(path: path, detail: "its model names table \(table.name), which the file does not have")
                }
                continue
            }
            readers[root] = TableReader(table: table, existingColumns: Set(columns.map(\.name)), model: chosen, layout: layout)
        }
        tableReaders = readers
    }

    deinit {
        if case .privateCopy(let folder) = access { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// Runs reads in one read transaction: everything `body` sees comes from the same WAL snapshot.
    /// Keep it short: a long read transaction stops the app's WAL from checkpointing.
    public func read<T>(_ body: (StoreSnapshot) throws -> T) throws(CoreDataStoreError) -> T {
        do {
            return try connection.read { db in try body(StoreSnapshot(store: self, db: db)) }
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// The `PRAGMA data_version` of the reader's connection: it changes exactly when another
    /// connection commits (or the store had to be opened again), so polling it is a cheap way to notice
    /// the app's saves.
    public func dataVersion() throws(CoreDataStoreError) -> Int64 {
        try connection.dataVersion()
    }

    /// Why this handle no longer describes the store at ``path``, or nil if it still does: the file was
    /// replaced by another (a new inode) or its schema changed (a migration in place). Cheap enough to ask
    /// on every wake of a follower: one `stat` and one header read.
    public func staleness() throws(CoreDataStoreError) -> Change? {
        let current = FileIdentity(path: path)
        if current == nil { return nil } // gone for now (being replaced): keep the open file until a new one appears
        if current != fileIdentity { return .replaced }
        do {
            // GRDB, for one, creates and drops a table to make a WAL file exist: only other SQL is a change.
            let schema = try connection.read { db in try StoreCatalog.Schema.read(db, unlessVersion: catalog.schema) }
            return schema.sql != catalog.schema.sql ? .migrated : nil
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// The concrete entity name for an entity number, if the model has it.
    public func entityName(forNumber number: Int) -> String? { entityNameByNumber[number] }

    /// The object ID of a row.
    public func objectID(entity: String, primaryKey: Int64) -> ManagedObjectID {
        ManagedObjectID(storeUUID: metadata.storeUUID, entityName: entity, primaryKey: primaryKey)
    }

    /// The ID with the store UUID spelled as the store spells it (URI hosts are case-insensitive).
    public func canonical(_ objectID: ManagedObjectID) -> ManagedObjectID {
        ManagedObjectID(storeUUID: metadata.storeUUID, entityName: objectID.entityName, primaryKey: objectID.primaryKey)
    }

    /// Checks that a URI names an object of this store and of an entity of its model.
    public func validate(_ objectID: ManagedObjectID) throws(CoreDataStoreError) {
        guard objectID.storeUUID.caseInsensitiveCompare(metadata.storeUUID) == .orderedSame else {
            throw .foreignObjectID(uri: objectID.uriRepresentation, storeUUID: metadata.storeUUID)
        }
        guard model.entity(named: objectID.entityName) != nil else {
            throw .unknownEntity(name: objectID.entityName)
        }
    }
}

extension PersistentStore {
    /// Every way a model file disagrees with the store, phrased precisely.
    static func differences(
        model: ManagedObjectModel, cachedModel: ManagedObjectModel?, catalog: StoreCatalog, metadata: StoreMetadata
    ) -> [String] {
        var differences: [String] = []
        let modelNames = Set(model.entities.map(\.name))
        let renamed = Set(model.entities.compactMap(\.renamingIdentifier))
        let storeNames = Set(metadata.versionHashes.keys)
        if !storeNames.isEmpty {
            for name in storeNames.subtracting(modelNames).subtracting(renamed).sorted() {
                differences.append("entity \(name) is in the store but not in the model")
            }
            for entity in model.entities where !storeNames.contains(entity.name) && !(entity.renamingIdentifier.map(storeNames.contains) ?? false) {
                differences.append("entity \(entity.name) is in the model but not in the store")
            }
        }
        if let cachedModel {
            // The store's own model is exactly what wrote it: compare property by property.
            for entity in model.entities {
                guard let stored = cachedModel.entity(named: entity.name) ?? entity.renamingIdentifier.flatMap(cachedModel.entity(named:)) else { continue }
                let mine = Dictionary(entity.attributes.filter(\.isStored).map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
                let theirs = Dictionary(stored.attributes.filter(\.isStored).map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
                for (name, type) in mine.sorted(by: { $0.key < $1.key }) {
                    if let other = theirs[name] {
                        if other != type {
                            differences.append("\(entity.name).\(name) is \(type.modelFileName) in the model but \(other.modelFileName) in the store")
                        }
                    } else {
                        differences.append("\(entity.name).\(name) is in the model but not in the store")
                    }
                }
                for name in Set(theirs.keys).subtracting(mine.keys).sorted() {
                    differences.append("\(entity.name).\(name) is in the store but not in the model")
                }
                let myRelationships = Set(entity.relationships.filter { !$0.isTransient }.map(\.name))
                let theirRelationships = Set(stored.relationships.filter { !$0.isTransient }.map(\.name))
                for name in myRelationships.subtracting(theirRelationships).sorted() {
                    differences.append("relationship \(entity.name).\(name) is in the model but not in the store")
                }
                for name in theirRelationships.subtracting(myRelationships).sorted() {
                    differences.append("relationship \(entity.name).\(name) is in the store but not in the model")
                }
            }
        } else {
            // No archive: check that every column the model needs exists.
            let layout = StoreLayout(model: model, entityNumbers: catalog.entityNumbers(for: model))
            for table in layout.tables.values.sorted(by: { $0.name < $1.name }) {
                guard let columns = catalog.tables[table.name] else {
                    differences.append("table \(table.name) for entity \(table.rootEntity) is missing from the store")
                    continue
                }
                let existing = Set(columns.map(\.name))
                for column in table.columns where !existing.contains(column.name) {
                    differences.append("column \(table.name).\(column.name) for \(column.content.propertyDescription) is missing from the store")
                }
            }
        }
        return differences
    }
}

extension StoreLayout.Column.Content {
    /// `Entity.property`, for messages.
    var propertyDescription: String {
        switch self {
        case .attribute(let entity, let name, _, _), .foreignKey(let entity, let name),
             .foreignEntity(let entity, let name), .foreignOrder(let entity, let name):
            "\(entity).\(name)"
        }
    }
}
