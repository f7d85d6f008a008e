#if PostgreSQL
import Foundation
import TestScratch

/// A throw-away PostgreSQL cluster for one test: `initdb` in the scratch folder, a server on 127.0.0.1 at a
/// free port, stopped by its pid. Never Debian's default cluster.
///
/// Root (CI) cannot run PostgreSQL: the cluster then belongs to the `postgres` account, and its commands
/// run through `runuser`.
final class PostgresCluster {
    /// Why the tests cannot start a cluster here, or nil when they can. With SEARCHLIGHT_REQUIRE_POSTGRES=1
    /// (CI) a missing server fails the tests instead of skipping them.
    static let unavailability: String? = {
        guard let binaries else { return "PostgreSQL's server programs (initdb, pg_ctl) are not installed: apt-get install postgresql-15 postgresql-15-postgis-3" }
        guard FileManager.default.fileExists(atPath: "/usr/share/postgresql/\(binaries.version)/extension/postgis.control") else {
            return "PostGIS is not installed: apt-get install postgresql-\(binaries.version)-postgis-3"
        }
        return nil
    }()

    static var required: Bool { ProcessInfo.processInfo.environment["SEARCHLIGHT_REQUIRE_POSTGRES"] == "1" }

    /// The newest installed server's bin folder and major version.
    static let binaries: (folder: String, version: String)? = {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return ("\(root)/\(version)/bin", String(version))
        }
        return nil
    }()

    let folder: URL
    let port: Int
    let user = "searchlight"
    private(set) var pid: pid_t = 0

    var data: URL { folder.appendingPathComponent("data") }
    /// The index location of a database of this cluster.
    func url(_ database: String = "searchlight") -> String { "postgres://\(user)@127.0.0.1:\(port)/\(database)" }

    /// A streaming replica of a running cluster: `pg_basebackup` of the primary (with its replication
    /// settings written, `-R`), started on a port of its own. It replays the primary's WAL as it comes.
    init(replicaOf primary: PostgresCluster) throws {
        guard let binaries = Self.binaries else { throw ClusterError.unavailable(Self.unavailability ?? "") }
        folder = Scratch.folder.appendingPathComponent("postgres-replica-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.handOver(folder)
        port = try Self.freePort()
        try Self.run("\(binaries.folder)/pg_basebackup", ["-h", "127.0.0.1", "-p", "\(primary.port)", "-U", user, "-D", data.path, "-R", "-X", "stream", "-c", "fast", "--no-sync"])
        try start()
    }

    /// Creates, starts and readies a cluster with a `searchlight` database.
    init() throws {
        guard Self.unavailability == nil, let binaries = Self.binaries else { throw ClusterError.unavailable(Self.unavailability ?? "") }
        folder = Scratch.folder.appendingPathComponent("postgres-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.handOver(folder)
        port = try Self.freePort()
        try Self.run("\(binaries.folder)/initdb", ["-D", data.path, "-U", user, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"])
        try start()
        try Self.run("\(binaries.folder)/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "searchlight"])
    }

    /// Creates another database in the cluster.
    func createDatabase(_ name: String) throws {
        guard let binaries = Self.binaries else { return }
        try Self.run("\(binaries.folder)/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, name])
    }

    /// Starts the server (again) and records its pid.
    func start() throws {
        guard let binaries = Self.binaries else { return }
        let options = "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(folder.path) -c fsync=off -c full_page_writes=off"
        try Self.run("\(binaries.folder)/pg_ctl", ["-D", data.path, "-o", options, "-l", folder.appendingPathComponent("server.log").path, "-w", "-t", "60", "start"])
        let pidFile = try String(contentsOf: data.appendingPathComponent("postmaster.pid"), encoding: .utf8)
        guard let first = pidFile.split(separator: "\n").first, let pid = pid_t(first) else { throw ClusterError.failed("no postmaster.pid") }
        self.pid = pid
    }

    /// Stops the server by its pid: SIGINT is PostgreSQL's fast shutdown (or SIGKILL, a crash); waits until it is gone.
    func stop(signal: Int32 = SIGINT) {
        guard pid > 0 else { return }
        kill(pid, signal)
        for _ in 0..<600 where kill(pid, 0) == 0 { usleep(50_000) }
        pid = 0
    }

    deinit { stop() }

    enum ClusterError: Error, CustomStringConvertible {
        case unavailable(String)
        case failed(String)
        var description: String {
            switch self {
            case .unavailable(let reason): return reason
            case .failed(let reason): return reason
            }
        }
    }

    /// A port nothing listens on now (the kernel's choice for a socket bound to port 0).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClusterError.failed("socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw ClusterError.failed("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Gives a folder to the `postgres` account when running as root.
    static func handOver(_ folder: URL) throws {
        guard geteuid() == 0 else { return }
        guard let account = getpwnam("postgres") else { throw ClusterError.failed("running as root, and there is no postgres account to run the server") }
        chown(folder.path, account.pointee.pw_uid, account.pointee.pw_gid)
    }

    /// Runs a PostgreSQL program (as `postgres` under root) and waits; throws with its output when it fails.
    ///
    /// posix_spawn and waitpid, not Foundation's Process: `pg_ctl start` leaves a server behind, and
    /// Process's wait for it never returned (its child stayed a zombie, unreaped).
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let command = geteuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        // Output to a file, not a pipe: the server pg_ctl starts would hold a pipe open.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-pg-\(UUID().uuidString).log").path
        defer { unlink(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, &argv, environ)
        guard spawned == 0 else { throw ClusterError.failed("cannot start \(command[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw ClusterError.failed("\(program) \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }
}
#endif
