import Foundation
import GRDB

/// The reader's connection to a store, which leaves the immutable at-rest mode as soon as an app opens
/// the store.
///
/// A WAL store with neither `-wal` nor `-shm` has no connection open; reading it as immutable creates no
/// files beside it (a forensic copy or a backup stays exactly as it was). Once an app opens it, immutable
/// pages would miss its saves and could be torn by its checkpoints, so every read first checks for the
/// companions and for a change to the file itself (an app that opened, saved and closed between two
/// reads leaves no companions, but its checkpoint wrote the file) and then opens the store afresh:
/// shared while the app has it open, immutable again once it is at rest.
final class StoreConnection: @unchecked Sendable {
    // @unchecked: `queue`, `access`, `stamp` and `generation` change only under `lock`, and GRDB's
    // DatabaseQueue is itself Sendable; every other stored property is a constant.
    private let lock = NSLock()
    private var queue: DatabaseQueue
    private var access: PersistentStore.Access
    private var stamp: FileStamp?
    /// How many times the store was opened afresh: part of ``dataVersion()``.
    private var generation: Int64 = 0
    let path: String
    /// The file SQLite opened behind `path` (it follows a link), whose companions tell that an app opened it:
    /// resolved once, not at every read.
    private let realPath: String

    init(queue: DatabaseQueue, access: PersistentStore.Access, path: String) {
        self.queue = queue
        self.access = access
        self.path = path
        realPath = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        stamp = FileStamp(path: path)
    }

    /// The connection to read with, reopened shared first if an app opened the store since.
    func database() throws(CoreDataStoreError) -> DatabaseQueue {
        try current().queue
    }

    /// The connection to read with and how many times the store was opened afresh, read together: a
    /// reopening between the two would pair one connection's `data_version` with another's count.
    private func current() throws(CoreDataStoreError) -> (queue: DatabaseQueue, generation: Int64) {
        lock.lock()
        defer { lock.unlock() }
        if access == .atRest && (companionsExist() || FileStamp(path: path) != stamp) {
            stamp = FileStamp(path: path)
            (queue, _, access) = try PersistentStore.open(path: path)
            generation += 1
        }
        return (queue, generation)
    }

    /// `PRAGMA data_version`, made comparable across reopenings: a new connection starts counting afresh
    /// (its first value says nothing of commits before it opened), so the value carries how many times the
    /// store was opened again — itself a sign that an app saved. Without it, a follower that saw version 1
    /// on the at-rest connection and then 1 on the shared one missed the save that made it reopen.
    func dataVersion() throws(CoreDataStoreError) -> Int64 {
        let (database, generation) = try current()
        do {
            let version = try database.inDatabase { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
            return generation << 32 | (version & 0xFFFF_FFFF)
        } catch {
            throw PersistentStore.storeError(error, path: path)
        }
    }

    /// Runs `body` on the current connection; a read that failed because an app opened the store
    /// meanwhile is run once more on the connection opened for it (whichever thread reopened it).
    func read<T>(_ body: (Database) throws -> T) throws(CoreDataStoreError) -> T {
        let database = try self.database()
        do {
            return try database.read(body)
        } catch {
            // Comparing connections, not modes: another thread may have reopened the store between the
            // failed read and this check, and its connection is the one to retry on.
            guard let current = try? self.database(), current !== database else {
                throw PersistentStore.storeError(error, path: path)
            }
            do { return try current.read(body) } catch { throw PersistentStore.storeError(error, path: path) }
        }
    }

    /// Whether an app opened the store: its companions exist beside the real file (SQLite follows a link).
    private func companionsExist() -> Bool {
        RegularFile.kind(of: realPath + "-wal") != .missing || RegularFile.kind(of: realPath + "-shm") != .missing
    }
}
