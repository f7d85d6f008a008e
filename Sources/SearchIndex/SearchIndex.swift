import Foundation
import GRDB

/// Searchlight's index: one SQLite file (WAL) holding items keyed by URI, an FTS5 table with the ICU
/// tokenizer, an R-tree of locations and one checkpoint per store.
///
/// Writers apply ``IndexBatch``es atomically; readers (searches, dumps, status) run in WAL snapshots,
/// so they never block the writer or each other.
public final class SearchIndex: Sendable {
    /// How an index is opened.
    public enum Mode: Sendable {
        /// For queries: the file must exist and is never written.
        case readOnly
        /// For an exporter: created if missing (with `permissions`), migrated forward if older.
        case readWrite(permissions: Int?)
    }

    /// The index file's path.
    public let path: String
    /// The device and inode of the file opened for writing, to notice it deleted or replaced.
    let identity: [UInt64]?
    let database: any DatabaseReader
    let writer: (any DatabaseWriter)?
    /// The items of filter comparisons its connections read and keep for later searches.
    let filterItemSets: FilterItemSets
    /// Checkpoints the log beside the writer's commits (read-write only; nil if its connection did not open).
    private let checkpointer: WALCheckpointer?

    /// Opens an index.
    ///
    /// - Parameters:
    ///   - path: The index file.
    ///   - mode: Read-only for queries (a pool of connections, so searches run in parallel), or read-write
    ///     for the one exporter.
    ///   - busyTimeout: How long a statement waits for a lock another process holds before it fails
    ///     with ``SearchIndexError/busy(path:)``.
    public init(path: String, mode: Mode, busyTimeout: TimeInterval = 10) throws(SearchIndexError) {
        self.path = path
        let manager = FileManager.default
        let filterItemSets = FilterItemSets()
        self.filterItemSets = filterItemSets
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.prepareDatabase { db in
            try SearchTokenizer.register(on: db)
            try SearchTokenizer.registerRanking(on: db)
            SearchIndex.registerPredicateFunctions(on: db)
            // A new connection may take the address of one closed before: nothing it kept is this one's.
            filterItemSets.opened(db)
            // FTS5 segment merges and the R-tree touch many pages: a 64 MiB cache keeps them in memory,
            // and memory-mapped reads spare a system call per page on large indexes. The whole file is mapped, up
            // to SQLite's own ceiling (2 GiB in Debian's build): a 940k-item index is 1.2 GB, and the pages past a
            // 1 GiB map (the lists an idle follower wrote last) were read a system call each.
            try db.execute(sql: "PRAGMA cache_size = -65536")
            try db.execute(sql: "PRAGMA mmap_size = 17179869184")
            // GRDB gives a pool's reader connections a busy timeout of their own: set here, after it, the
            // caller's holds for reads too (a read-only index reads only through them).
            try db.execute(sql: "PRAGMA busy_timeout = \(Int(busyTimeout * 1000))")
        }
        do {
            switch mode {
            case .readOnly:
                // Opening a FIFO or device would block or read garbage: only regular files are indexes.
                if let problem = IndexFile.readProblem(path) { throw SearchIndexError.notAnIndex(path: path, detail: problem) }
                guard manager.fileExists(atPath: path) else { throw SearchIndexError.indexNotFound(path: path) }
                configuration.readonly = true
                // A pool of read-only connections: concurrent searches run in parallel, each in its own snapshot.
                let pool = try DatabasePool(path: path, configuration: configuration)
                try Self.checkSchema(pool, path: path, canMigrate: false)
                database = pool
                writer = nil
                checkpointer = nil
            case .readWrite(let permissions):
                let allowed = mode_t(permissions ?? 0o600)
                IndexFile.removeStaleTemporaries(of: path)
                for file in [path, path + "-wal", path + "-shm"] {
                    if let problem = IndexFile.writeProblem(file) { throw SearchIndexError.unsafeFile(path: file, reason: problem) }
                }
                switch IndexFile.state(path) {
                case .missing:
                    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
                    var isDirectory: ObjCBool = false
                    guard manager.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                        throw SearchIndexError.folderNotFound(path: path, folder: folder)
                    }
                    try Self.create(at: path, permissions: Int(allowed), configuration: configuration)
                case .regular(_, _, let size, _) where size > 0:
                    // Nothing writes to a file before it is known to be an index: not the WAL switch, not the migrator.
                    try IndexFile.verifyIsIndex(path, configuration: configuration)
                default:
                    break // the user's own empty file: an index not yet built
                }
                IndexFile.tighten(path, to: allowed)
                configuration.journalMode = .wal
                let pool = try DatabasePool(path: path, configuration: configuration)
                try Self.checkSchema(pool, path: path, canMigrate: true)
                let checkpointer = WALCheckpointer(path: path)
                if let checkpointer {
                    pool.writeWithoutTransaction { db in
                        if let connection = db.sqliteConnection { checkpointer.attach(to: connection) }
                    }
                }
                database = pool
                writer = pool
                self.checkpointer = checkpointer
            }
            identity = Self.identity(of: path)
        } catch {
            throw Self.indexError(error, path: path)
        }
    }

    deinit {
        // The writer's hook points at the checkpointer: it goes first, then the checkpointer's thread. The
        // pool closes after, and its last connection checkpoints what is left, as SQLite's always does.
        guard let checkpointer else { return }
        // Reentrant: the last reference may go inside a write of its own.
        if let writer {
            writer.unsafeReentrantWrite { db in
                if let connection = db.sqliteConnection { checkpointer.detach(from: connection) }
            }
        }
        checkpointer.stop()
    }

    /// Builds a new index beside `path` and links it into place only once its schema is committed, so a
    /// file at `path` is always a whole index: a process killed while creating one leaves no half-built
    /// file that later runs would refuse. The file is created with `permissions` (the store's) before
    /// SQLite touches it, since its -wal and -shm copy the database file's mode.
    private static func create(at path: String, permissions: Int, configuration: Configuration) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).creating-\(getpid())").path
        for suffix in ["", "-journal"] { unlink(temporary + suffix) } // a leftover of this pid's predecessor
        let mode = mode_t(permissions)
        let descriptor = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw SearchIndexError.database(path: path, message: "cannot create the file: \(String(cString: strerror(errno)))")
        }
        fchmod(descriptor, mode) // the umask must not narrow or widen what we asked for
        close(descriptor)
        defer { unlink(temporary) }
        let queue = try DatabaseQueue(path: temporary, configuration: configuration)
        try migrator.migrate(queue)
        try queue.write { db in try db.execute(sql: "PRAGMA user_version = \(schemaVersion)") }
        try queue.close()
        // link, not rename: another process that created the index first keeps its file (EEXIST). Whatever
        // is there then must pass the same checks as any existing file: a link planted meanwhile does not.
        guard link(temporary, path) == 0 || errno == EEXIST else {
            throw SearchIndexError.database(path: path, message: "cannot create the file: \(String(cString: strerror(errno)))")
        }
        unlink(temporary) // before the check below: until then the new index has two names
        if let problem = IndexFile.writeProblem(path) { throw SearchIndexError.unsafeFile(path: path, reason: problem) }
    }

    /// Why this handle no longer writes the file at ``path``, or nil if it still does: a writer whose
    /// file was deleted would go on "indexing" into an unlinked inode nobody can search.
    public func staleness() -> SearchIndexError? {
        guard writer != nil, let identity else { return nil }
        guard let current = Self.identity(of: path) else { return .indexReplaced(path: path, reason: "was deleted") }
        return current == identity ? nil : .indexReplaced(path: path, reason: "was replaced by another file")
    }

    private static func identity(of path: String) -> [UInt64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [UInt64(truncatingIfNeeded: info.st_dev), UInt64(truncatingIfNeeded: info.st_ino)]
    }

    private static func checkSchema(_ reader: any DatabaseReader, path: String, canMigrate: Bool) throws {
        let (version, tables) = try reader.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0,
             try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")))
        }
        if version > schemaVersion { throw SearchIndexError.newerSchema(path: path, version: version) }
        // GRDB's migrator commits its bookkeeping table before the first migration: an index whose creation
        // was killed in between (by a build before creation became atomic) holds only that table, and is
        // an index not yet built, not a foreign file.
        let empty = version == 0 && tables.subtracting(["grdb_migrations"]).isEmpty
        if !empty && !tables.contains("items") {
            throw SearchIndexError.notAnIndex(path: path, detail: "it has no items table")
        }
        if version < schemaVersion {
            guard canMigrate, let writer = reader as? any DatabaseWriter else {
                if empty { throw SearchIndexError.notAnIndex(path: path, detail: "it is empty") }
                throw SearchIndexError.needsUpgrade(path: path)
            }
            try migrator.migrate(writer)
            try writer.write { db in try db.execute(sql: "PRAGMA user_version = \(schemaVersion)") }
        }
    }

    /// Translates database errors into messages that say what to do.
    static func indexError(_ error: any Error, path: String) -> SearchIndexError {
        // Readers deep inside a transaction do not know the path: they leave it empty.
        if case .notAnIndex("", let detail)? = error as? SearchIndexError { return .notAnIndex(path: path, detail: detail) }
        if let error = error as? SearchIndexError { return error }
        guard let error = error as? DatabaseError else { return .database(path: path, message: "\(error)") }
        switch error.resultCode {
        case .SQLITE_NOTADB: return .notAnIndex(path: path, detail: "not an SQLite database")
        case .SQLITE_CORRUPT: return .notAnIndex(path: path, detail: "the file is damaged")
        case .SQLITE_BUSY, .SQLITE_LOCKED: return .busy(path: path)
        case .SQLITE_ERROR where ["no such table", "no such column", "no such index"].contains(where: { error.message?.hasPrefix($0) == true }):
            // The schema version said what the file holds and it does not: a table dropped by hand or a tool.
            // Or, if nothing edited it, a Searchlight bug: the message says so rather than blame the file alone.
            return .notAnIndex(path: path, detail: "it is damaged: \(error.message ?? "a table is missing"); if no tool edited it, report this")
        default: return .database(path: path, message: error.message ?? "\(error.resultCode)")
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws(SearchIndexError) -> T {
        do {
            if writer == nil, let pool = database as? DatabasePool {
                return try pool.unsafeRead { db in try Self.inReadTransaction(db, body) }
            }
            return try database.read(body)
        } catch {
            throw Self.indexError(error, path: path)
        }
    }

    /// The same read, suspending instead of blocking: GRDB waits for a free connection without holding a
    /// thread, runs `body` on that connection's queue, and interrupts it when the task is cancelled.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(SearchIndexError) -> T {
        do {
            if writer == nil, let pool = database as? DatabasePool {
                return try await pool.unsafeRead { db in try Self.inReadTransaction(db, body) }
            }
            return try await database.read(body)
        } catch is CancellationError {
            // GRDB interrupts the statement of a cancelled task (see Database.withTimeLimit).
            throw .cancelled
        } catch {
            throw Self.indexError(error, path: path)
        }
    }

    /// `body` in one deferred transaction (one snapshot) on a read-only connection of the pool: cached BEGIN
    /// and COMMIT cost a fraction of GRDB's general-purpose read.
    private static func inReadTransaction<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        try db.cachedStatement(sql: "BEGIN DEFERRED").execute()
        do {
            let value = try body(db)
            try db.cachedStatement(sql: "COMMIT").execute()
            return value
        } catch {
            try? db.cachedStatement(sql: "ROLLBACK").execute()
            throw error
        }
    }

    func write<T>(_ body: (Database) throws -> T) throws(SearchIndexError) -> T {
        guard let writer else { throw SearchIndexError.database(path: path, message: "the index was opened read-only") }
        do {
            // Every write transaction keeps the term leader lists true: the tokenizer watches their terms
            // while it runs, and the lists of those its documents held are marked stale before it commits.
            return try writer.write { db in
                try TermLeaders.watch(db)
                let value = try body(db)
                try TermLeaders.saveTouched(db)
                return value
            }
        } catch {
            throw Self.indexError(error, path: path)
        }
    }
}
