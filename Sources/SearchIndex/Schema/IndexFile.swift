import Foundation
import SQLiteFiles
import GRDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What lies at an index path, checked the way a careful daemon checks a file it is about to write in a
/// folder other users may write: never through a symbolic link, never another user's file, never a file
/// with a second name, never a foreign SQLite file.
enum IndexFile {
    /// What `lstat` finds at a path.
    enum State: Equatable {
        case missing
        case symbolicLink
        case notRegular(String)
        case regular(owner: uid_t, links: UInt64, size: Int64, mode: mode_t)
    }

    /// The state of `path` itself (a link is not followed).
    static func state(_ path: String) -> State {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFLNK: return .symbolicLink
        case S_IFREG: return .regular(owner: info.st_uid, links: UInt64(info.st_nlink), size: Int64(info.st_size), mode: info.st_mode & 0o7777)
        case S_IFDIR: return .notRegular("a directory")
        case S_IFIFO: return .notRegular("a FIFO (named pipe)")
        case S_IFSOCK: return .notRegular("a socket")
        default: return .notRegular("a device or other special file")
        }
    }

    /// Why `path` must not be written, or nil when it is the running user's own regular file with one name
    /// (or nothing is there yet).
    static func writeProblem(_ path: String) -> String? {
        switch state(path) {
        case .missing: nil
        case .symbolicLink: "it is a symbolic link, and Searchlight never writes through links"
        case .notRegular(let kind): "it is \(kind), not a regular file"
        case .regular(let owner, let links, _, _):
            if owner != geteuid() { "it belongs to another user (uid \(owner))" }
            else if links != 1 { "it has \(links) names (a hard link to another file)" }
            else { nil }
        }
    }

    /// Why the file at `path` cannot be read as an index without blocking or misleading, or nil.
    static func readProblem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "it is a directory"
        case S_IFIFO: return "it is a FIFO (named pipe), not a regular file"
        case S_IFSOCK: return "it is a socket, not a regular file"
        default: return "it is a device or other special file, not a regular file"
        }
    }

    /// Checks, without writing anything, that an existing non-empty file is a Searchlight index (or one
    /// whose creation was interrupted): the user version and tables are read through an immutable
    /// connection, so a foreign file never sees a WAL switch, a migrator's table or a companion file.
    static func verifyIsIndex(_ path: String, configuration base: Configuration) throws {
        var configuration = base
        configuration.readonly = true
        let companions = FileManager.default.fileExists(atPath: path + "-wal")
        // With a -wal present the file is in use: read it the ordinary way to see what the -wal holds.
        let location = companions ? path : SQLiteFileURI.immutable(path)
        let queue = try DatabaseQueue(path: location, configuration: configuration)
        let (version, tables) = try queue.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0,
             try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")))
        }
        try queue.close()
        if version > SearchIndex.schemaVersion { throw SearchIndexError.newerSchema(path: path, version: version) }
        let empty = version == 0 && tables.subtracting(["grdb_migrations"]).isEmpty
        if !empty && !tables.contains("items") {
            throw SearchIndexError.notAnIndex(path: path, detail: "it has no items table; it may be another program's database, which Searchlight will not write")
        }
    }


    /// Narrows the permission bits of the index and its companions to `allowed` (a store tightened to
    /// 0600 tightens its index); never widens them.
    static func tighten(_ path: String, to allowed: mode_t) {
        for file in [path, path + "-wal", path + "-shm"] {
            guard case .regular(let owner, _, _, let mode) = state(file), owner == geteuid() else { continue }
            let narrowed = mode & allowed & 0o777
            if narrowed != mode { chmod(file, narrowed) }
        }
    }

    /// Removes what killed runs left: `.<name>.creating-<pid>` files whose process is gone.
    static func removeStaleTemporaries(of path: String) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let prefix = ".\(url.lastPathComponent).creating-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            let pidText = rest.prefix { $0.isNumber }
            guard let pid = Int32(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let file = folder + "/" + name
            if case .regular(let owner, _, _, _) = state(file), owner == geteuid() { unlink(file) }
        }
    }
}
