import Foundation
import SQLiteFiles
import GRDB

extension PersistentStore {
    /// How the reader reaches a store's pages.
    enum Access: Sendable, Equatable {
        /// As SQLite's WAL protocol has every reader do beside a live app: shared locks and read marks in `-shm`.
        case shared
        /// A WAL-mode store at rest (no `-wal`, no `-shm`: no connection has it open) read as immutable, so
        /// reading creates no companion files; ``StoreConnection`` reopens it shared once an app opens it.
        case atRest
        /// A store whose folder or companions cannot be written (read-only media, someone else's folder):
        /// a complete store (empty `-wal`) read as immutable in place.
        case readOnlyMedia
        /// A read-only folder whose `-wal` holds data but that lacks a usable `-shm`: the store and its
        /// `-wal` are copied into a private folder, which is removed when the store is closed.
        case privateCopy(folder: String)
    }

    /// Opens the database the cheapest safe way and reads its catalog, falling back when the folder is read-only.
    static func open(path: String) throws(CoreDataStoreError) -> (DatabaseQueue, StoreCatalog, Access) {
        let isWAL = try checkFile(at: path)
        // SQLite follows a symbolic link to the store and keeps the companions beside the real file: a store
        // reached through a link is live when the real file's -wal is, whatever lies beside the link.
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let wal = try companion(real, "-wal"), shm = try companion(real, "-shm")
        if isWAL && wal == nil && shm == nil {
            return try connect(path: path, immutable: true, access: .atRest)
        }
        do {
            return try connect(path: path, immutable: false, access: .shared)
        } catch let error where isWAL && isReadOnlyFailure(error) {
            // The WAL protocol needs a writable -shm. A store with nothing in its -wal is complete in the
            // main file; otherwise its -wal must be replayed, which SQLite can only do from a copy.
            if (wal ?? 0) == 0 {
                return try connect(path: path, immutable: true, access: .readOnlyMedia)
            }
            return try openPrivateCopy(of: real)
        }
    }

    /// Whether SQLite refused because it could not create or write the `-wal`/`-shm` companions.
    private static func isReadOnlyFailure(_ error: CoreDataStoreError) -> Bool {
        if case .unsupportedStore(_, let detail) = error, detail.hasPrefix(readOnlyDetailPrefix) { return true }
        return false
    }

    private static let readOnlyDetailPrefix = "SQLite cannot use its -wal and -shm companions"

    static func connect(path: String, immutable: Bool, access: Access) throws(CoreDataStoreError) -> (DatabaseQueue, StoreCatalog, Access) {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "CoreDataStore.reader"
        // Wait out short write locks of the app instead of failing at once.
        configuration.busyMode = .timeout(5)
        do {
            let database = try DatabaseQueue(path: immutable ? SQLiteFileURI.immutable(path) : path, configuration: configuration)
            let catalog = try database.read { db in try StoreCatalog.read(db, path: path) }
            return (database, catalog, access)
        } catch {
            throw storeError(error, path: path)
        }
    }


    private static func openPrivateCopy(of path: String) throws(CoreDataStoreError) -> (DatabaseQueue, StoreCatalog, Access) {
        let manager = FileManager.default
        let folder = manager.temporaryDirectory.appendingPathComponent("searchlight-store-\(UUID().uuidString)").path
        do {
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let copy = folder + "/" + URL(fileURLWithPath: path).lastPathComponent
            // The -wal first: a checkpoint between the two copies only moves pages the -wal still holds.
            try manager.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            try manager.copyItem(atPath: path, toPath: copy)
            let (database, catalog, _) = try connect(path: copy, immutable: false, access: .shared)
            return (database, catalog, .privateCopy(folder: folder))
        } catch {
            try? manager.removeItem(atPath: folder)
            if let error = error as? CoreDataStoreError { throw error }
            throw .unsupportedStore(path: path, detail: "its folder is read-only and its -wal holds data, and copying them aside failed (\(error.localizedDescription)); copy the store with its -wal into a writable folder")
        }
    }

    /// Rejects what is plainly not a store before SQLite sees it, with a message that says why, and
    /// never blocks: a FIFO, socket or device is refused before it is opened for reading.
    /// - Returns: Whether the header marks the store as WAL mode.
    @discardableResult
    static func checkFile(at path: String) throws(CoreDataStoreError) -> Bool {
        let header: Data
        do {
            header = try RegularFile.read(path, limit: 100)
        } catch {
            switch error {
            case .notRegular(let kind) where kind == "a directory": throw .notADatabase(path: path, detail: "it is a directory")
            case .notRegular(let kind): throw .unsupportedStore(path: path, detail: "it is \(kind), not a regular file")
            case .missing: throw .fileNotFound(path: path)
            case .unreadable(let reason): throw .unsupportedStore(path: path, detail: "the file cannot be read (\(reason))")
            case .tooLarge: throw .unsupportedStore(path: path, detail: "the file cannot be read")
            }
        }
        guard header.count == 100 else {
            throw .notADatabase(path: path, detail: header.isEmpty ? "the file is empty" : "the file is only \(header.count) bytes long")
        }
        guard header.prefix(16) == Data("SQLite format 3\0".utf8) else {
            throw .notADatabase(path: path, detail: "the file does not start with SQLite's header")
        }
        // Bytes 18 and 19 are the read and write format versions: 2 means WAL.
        return header[header.startIndex + 18] == 2 && header[header.startIndex + 19] == 2
    }

    /// The size of a companion file (`-wal`, `-shm`), nil when it does not exist; refuses one that is
    /// not a regular file, which SQLite would block on or misread.
    private static func companion(_ path: String, _ suffix: String) throws(CoreDataStoreError) -> Int64? {
        switch RegularFile.kind(of: path + suffix) {
        case .missing: return nil
        case .regular(let size): return size
        case .other(let kind): throw .unsupportedStore(path: path, detail: "its \(suffix) companion is \(kind), not a regular file")
        }
    }

    /// Translates database errors into messages that say what to do.
    package static func storeError(_ error: any Error, path: String) -> CoreDataStoreError {
        if let error = error as? CoreDataStoreError { return error }
        guard let error = error as? DatabaseError else { return .database(path: path, message: "\(error)") }
        switch error.resultCode {
        case .SQLITE_NOTADB:
            return .notADatabase(path: path, detail: "SQLite does not recognise the file format")
        case .SQLITE_CORRUPT:
            return .unsupportedStore(path: path, detail: "the file is damaged or truncated; restore it from a backup or let the app recreate it")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .busy(path: path)
        case .SQLITE_CANTOPEN, .SQLITE_READONLY:
            return .unsupportedStore(path: path, detail: readOnlyDetailPrefix + " (\(error.message ?? "\(error.resultCode)")); check that the file, its -wal and -shm are readable")
        case .SQLITE_IOERR:
            return .unsupportedStore(path: path, detail: "reading it failed with an I/O error (is it truncated or on a failing disk?)")
        case .SQLITE_ERROR, .SQLITE_MISMATCH, .SQLITE_RANGE, .SQLITE_TOOBIG, .SQLITE_SCHEMA, .SQLITE_FORMAT:
            // The store's schema is outside data: a table or column it lacks is the file's problem, not ours.
            return .unsupportedStore(path: path, detail: "SQLite could not read it as Core Data lays stores out (\(error.message ?? "\(error.resultCode)"))")
        default:
            return .database(path: path, message: error.message ?? "\(error.resultCode)")
        }
    }
}
