import CoreDataStore
import Foundation
import GRDB

/// Creates Core Data stores and applies saves to them exactly as Core Data does: rows, relationship
/// inverses, delete rules, `Z_OPT`, `Z_MAX`, and persistent history with interned strings.
///
/// This is how tests, the Corpus and demos play the app. It can also append saves to a copy of an
/// Apple-written store: it registers the SQL functions Core Data's derived-attribute triggers call.
/// Never point it at a live app's store.
public final class StoreWriter: Sendable {
    /// The store file's path.
    public let path: String
    /// The model the writer validates and lays out saves with.
    public let model: ManagedObjectModel
    /// How the model maps onto tables.
    package let layout: StoreLayout
    /// The store UUID.
    public let storeUUID: String
    /// Whether saves are recorded in persistent history.
    public let tracksHistory: Bool

    let database: DatabaseQueue
    let tombstoneColumnCount: Int
    /// Per-entity write plans, computed once (see ``EntityWritePlan``).
    let plans: [String: EntityWritePlan]

    private init(path: String, database: DatabaseQueue, model: ManagedObjectModel, layout: StoreLayout,
                 storeUUID: String, tracksHistory: Bool, tombstoneColumnCount: Int) {
        self.path = path
        self.database = database
        self.model = model
        self.layout = layout
        self.storeUUID = storeUUID
        self.tracksHistory = tracksHistory
        self.tombstoneColumnCount = tombstoneColumnCount
        plans = EntityWritePlan.plans(model: model, layout: layout)
    }

    static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(10)
        configuration.label = "CoreDataStore.writer"
        configuration.prepareDatabase { db in
            // Derived-attribute triggers of Apple-written stores call these; Core Data uses them to
            // refresh in-memory objects, so answering NULL keeps the triggers' SQL effects intact.
            for name in ["NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"] {
                db.add(function: DatabaseFunction(name, argumentCount: 5, pure: false) { _ in nil })
            }
        }
        return configuration
    }

    /// Creates a new store for a model: Core Data's DDL, bookkeeping rows, metadata plist, the model
    /// archive in `Z_MODELCACHE`, WAL journaling. Fails if the file exists.
    public static func create(
        at path: String, model: ManagedObjectModel, storeUUID: String = UUID().uuidString, historyTracking: Bool = true
    ) throws(CoreDataStoreError) -> StoreWriter {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw .saveRejected(reason: "\(path) already exists; remove it or choose another path")
        }
        let layout = StoreLayout(model: model)
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration())
            try database.writeWithoutTransaction { db in
                // Must precede the first table: auto-vacuum mode is fixed once the file has content.
                try db.execute(sql: "PRAGMA auto_vacuum = 2")
            }
            try database.write { db in
                for statement in layout.schemaStatements(model: model, historyTracking: historyTracking) {
                    try db.execute(sql: statement)
                }
                let numbers = layout.entityNumbers
                for entity in model.entities {
                    let parent = entity.superentityName.flatMap { numbers[$0] } ?? 0
                    try db.execute(sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                                   arguments: [numbers[entity.name], entity.name, parent])
                }
                if historyTracking {
                    for (number, name) in [(16001, "CHANGE"), (16002, "TRANSACTION"), (16003, "TRANSACTIONSTRING")] {
                        try db.execute(sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)",
                                       arguments: [number, name])
                    }
                }
                try db.execute(sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                               arguments: [storeUUID, model.storeMetadataPlist()])
                try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [model.modelCacheContent()])
            }
            return StoreWriter(path: path, database: database, model: model, layout: layout, storeUUID: storeUUID,
                               tracksHistory: historyTracking, tombstoneColumnCount: historyTracking ? layout.tombstoneColumnCount : 0)
        } catch {
            throw PersistentStore.storeError(error, path: path)
        }
    }

    /// Opens an existing store for writing (one this writer created, or a copy of an Apple-written one).
    /// The model comes from the store's `Z_MODELCACHE` unless a model file is given.
    public convenience init(path: String, modelPath: String? = nil) throws(CoreDataStoreError) {
        // Reuse the reader's checks and model resolution, then reopen read-write.
        let reader = try PersistentStore(path: path, modelPath: modelPath)
        guard reader.model.source != .schema else {
            throw .invalidModel(reason: "\(path) has no Z_MODELCACHE; pass the model file to write to it")
        }
        do {
            let database = try DatabaseQueue(path: path, configuration: Self.configuration())
            let tombstones = reader.historyTombstoneColumnCount
            self.init(path: path, database: database, model: reader.model, layout: reader.layout,
                      storeUUID: reader.metadata.storeUUID, tracksHistory: reader.hasHistory, tombstoneColumnCount: tombstones)
        } catch {
            throw PersistentStore.storeError(error, path: path)
        }
    }

    /// Applies a save as one SQLite transaction (with its history transaction, if tracked).
    /// Nothing is written when any part of it is invalid.
    @discardableResult
    public func save(_ request: SaveRequest) throws(CoreDataStoreError) -> SaveResult {
        do {
            return try database.write { db in
                var operation = SaveOperation(writer: self, db: db)
                return try operation.apply(request)
            }
        } catch {
            throw PersistentStore.storeError(error, path: path)
        }
    }

    /// Deletes history up to and including a transaction number (`deleteHistory(before:)`), returning
    /// how many transactions were removed. `Z_MAX` keeps later transactions' numbers unique.
    @discardableResult
    public func purgeHistory(through transaction: Int64) throws(CoreDataStoreError) -> Int {
        guard tracksHistory else { throw .historyNotTracked(path: path) }
        do {
            return try database.write { db in
                try db.execute(sql: "DELETE FROM ACHANGE WHERE ZTRANSACTIONID <= ?", arguments: [transaction])
                try db.execute(sql: "DELETE FROM ATRANSACTION WHERE Z_PK <= ?", arguments: [transaction])
                return db.changesCount
            }
        } catch {
            throw PersistentStore.storeError(error, path: path)
        }
    }

    /// Deletes history older than a date, returning how many transactions were removed.
    @discardableResult
    public func purgeHistory(before date: Date) throws(CoreDataStoreError) -> Int {
        guard tracksHistory else { throw .historyNotTracked(path: path) }
        do {
            let last = try database.read { db in
                try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM ATRANSACTION WHERE ZTIMESTAMP < ?",
                                   arguments: [date.timeIntervalSinceReferenceDate])
            }
            guard let last else { return 0 }
            return try purgeHistory(through: last)
        } catch let error as CoreDataStoreError {
            throw error
        } catch {
            throw PersistentStore.storeError(error, path: path)
        }
    }

    /// Runs `PRAGMA integrity_check`; returns "ok" for a sound file.
    public func integrityCheck() throws(CoreDataStoreError) -> String {
        do {
            return try database.read { db in
                try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
            }
        } catch {
            throw PersistentStore.storeError(error, path: path)
        }
    }

    /// Folds the WAL into the main file (a writer's prerogative; the reader never does this).
    public func checkpoint() throws(CoreDataStoreError) {
        do {
            _ = try database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        } catch {
            throw PersistentStore.storeError(error, path: path)
        }
    }
}
