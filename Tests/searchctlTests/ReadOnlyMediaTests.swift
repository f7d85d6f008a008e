import Foundation
import Testing
import TestScratch

/// Stores on read-only media (a read-only mount, a backup, someone else's folder) are read where they
/// lie, and nothing beside them changes.
/// Root reads through any permission, so as root the tests run searchctl as `nobody` with setpriv.
private let canRunReadOnly = getuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

@Suite("Stores on read-only media", .enabled(if: CLI.fixturesAvailable && canRunReadOnly, Comment(rawValue: CLI.skipMessage)), .ownThread)
struct ReadOnlyMediaTests {
    nonisolated static let realStores = CLI.stores.deletingLastPathComponent().appendingPathComponent("real-stores")
    static let photos = realStores.appendingPathComponent("openhouse__osxphotos__Photos-10.15.7")

    /// A folder the running user (or `nobody`) can read but not write, holding copies of `files`.
    func readOnlyFolder(_ files: [(URL, String)]) throws -> URL {
        let folder = Scratch.folder.appendingPathComponent("searchlight-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (source, name) in files {
            try FileManager.default.copyItem(at: source, to: folder.appendingPathComponent(name))
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: folder.appendingPathComponent(name).path)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        return folder
    }

    /// A folder the reader may write its index into.
    func writableFolder() throws -> URL {
        let folder = Scratch.folder.appendingPathComponent("searchlight-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        return folder
    }

    func runReadOnly(_ arguments: [String], temporary: URL? = nil) throws -> CLI.Result {
        let environment = temporary.map { ["TMPDIR": $0.path] } ?? [:]
        guard getuid() == 0 else { return try CLI.run(arguments, environment: environment) }
        return try CLI.runProgram("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", CLI.executable.path] + arguments,
                                  environment: environment)
    }

    func contents(_ folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            result[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return result
    }

    /// Indexes `store` in a read-only folder and checks the items equal those of the same store read
    /// from a writable copy, and that the folder did not change.
    func check(_ folder: URL, store: String, note: String?, temporary: URL? = nil) throws {
        let before = try contents(folder)
        let output = try writableFolder()
        let index = output.appendingPathComponent("ro.searchindex").path
        let result = try runReadOnly(["index", "--store", folder.appendingPathComponent(store).path, "--index", index], temporary: temporary)
        #expect(result.status == 0, "\(result.stderr)")
        if let note { #expect(result.stderr.contains(note), "\(result.stderr)") }
        #expect(try contents(folder) == before)

        // The same files in a writable folder, read the ordinary way.
        let writable = try writableFolder()
        for name in before.keys { try FileManager.default.copyItem(at: folder.appendingPathComponent(name), to: writable.appendingPathComponent(name)) }
        let reference = writable.appendingPathComponent("ref.searchindex").path
        let indexed = try CLI.run(["index", "--store", writable.appendingPathComponent(store).path, "--index", reference])
        #expect(indexed.status == 0, "\(indexed.stderr)")
        let dump = try CLI.run(["dump", "--index", index]).stdout
        let expected = try CLI.run(["dump", "--index", reference]).stdout
        #expect(!dump.isEmpty && dump == expected)
    }

    @Test("a store at rest (no -wal, no -shm) is read in place")
    func atRest() throws {
        let folder = try readOnlyFolder([(CLI.stores.appendingPathComponent("SampleModel2_V1.sqlite"), "Books.sqlite")])
        try check(folder, store: "Books.sqlite", note: nil)
    }

    @Test("a store whose -wal and -shm exist but cannot be written is read in place")
    func readOnlyCompanions() throws {
        let folder = try readOnlyFolder(["", "-wal", "-shm"].map { (Self.photos.appendingPathComponent("Photos.sqlite" + $0), "Photos.sqlite" + $0) })
        try check(folder, store: "Photos.sqlite", note: nil)
    }

    @Test("a store whose -wal holds data but has no -shm is read from a private copy")
    func walWithoutShm() throws {
        // A temporary folder of this test's own (TMPDIR): other tests' copies come and go in /tmp meanwhile.
        let temporary = try writableFolder()
        let folder = try readOnlyFolder(["", "-wal"].map { (Self.photos.appendingPathComponent("Photos.sqlite" + $0), "Photos.sqlite" + $0) })
        try check(folder, store: "Photos.sqlite", note: "read from a private copy", temporary: temporary)
        // The copy is gone once the command ends.
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path)
        #expect(!left.contains { $0.hasPrefix("searchlight-store-") }, "\(left)")
    }

    @Test("a store with an empty -wal and no -shm is read as an immutable file")
    func emptyWal() throws {
        let empty = try writableFolder().appendingPathComponent("empty-wal")
        _ = FileManager.default.createFile(atPath: empty.path, contents: Data())
        let folder = try readOnlyFolder([(CLI.stores.appendingPathComponent("SampleModel2_V1.sqlite"), "Books.sqlite"), (empty, "Books.sqlite-wal")])
        try check(folder, store: "Books.sqlite", note: "immutable")
    }
}

/// The command line on a real Photos library: many-to-many and ordered relationships resolve.
@Suite("A real Photos library from the command line", .enabled(if: FileManager.default.fileExists(atPath: ReadOnlyMediaTests.photos.path), Comment(rawValue: CLI.skipMessage)), .ownThread)
struct PhotosLibraryTests {
    @Test("index, dump, then resolve every item through stdin: exit 0, one object per URI, albums list their assets in order")
    func resolveEverything() throws {
        let folder = Scratch.folder.appendingPathComponent("photos-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: ReadOnlyMediaTests.photos, to: folder)
        let store = folder.appendingPathComponent("Photos.sqlite").path
        #expect(try CLI.run(["index", "--store", store, "--quiet"]).status == 0)
        let uris = try CLI.run(["dump", "--store", store]).lines.compactMap { line -> String? in
            (try? CLI.json(line) as? [String: Any])?["uri"] as? String
        }
        #expect(uris.count > 900)
        let resolved = try CLI.run(["resolve", "-", "--store", store, "--format", "jsonl"], stdin: uris.joined(separator: "\n") + "\n")
        #expect(resolved.status == 0, "\(resolved.stderr)")
        #expect(resolved.lines.count == uris.count)
        let album = try #require(resolved.lines.compactMap { try? CLI.json($0) as? [String: Any] }
            .first { $0["uri"] as? String == "x-coredata://FE941CCE-3AF4-4243-907C-C2233C09008D/Album/p5" })
        let assets = (album["relationships"] as? [String: Any])?["assets"] as? [String]
        #expect(assets?.count ?? 0 >= 2)
    }
}
