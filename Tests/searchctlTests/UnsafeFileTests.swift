import Foundation
import GRDB
import Testing
import TestScratch

/// Files planted where Searchlight writes never make it write elsewhere, and data never reaches the
/// terminal as control sequences.
@Suite("Planted files and hostile text", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)), .ownThread)
struct UnsafeFileTests {
    func victim(in folder: URL) throws -> URL {
        let victim = folder.appendingPathComponent("victim.txt")
        try Data("precious\n".utf8).write(to: victim)
        return victim
    }

    @Test("a symbolic link at <index>.lock: exit 65, the link's target untouched")
    func symlinkedLock() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        let target = try victim(in: folder)
        let index = folder.appendingPathComponent("Books.searchindex").path
        try FileManager.default.createSymbolicLink(atPath: index + ".lock", withDestinationPath: target.path)
        let result = try CLI.run(["index", "--store", store, "--index", index])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("symbolic link"))
        #expect(try Data(contentsOf: target) == Data("precious\n".utf8))
    }

    @Test("a hard link at <index>.lock: exit 65, the other name's content untouched")
    func hardLinkedLock() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        let target = try victim(in: folder)
        let index = folder.appendingPathComponent("Books.searchindex").path
        try FileManager.default.linkItem(atPath: target.path, toPath: index + ".lock")
        let result = try CLI.run(["index", "--store", store, "--index", index])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("hard link"))
        #expect(try Data(contentsOf: target) == Data("precious\n".utf8))
    }

    @Test("a lock file another user owns is not written", .enabled(if: getuid() == 0, "needs root to give a file to another user"))
    func foreignLock() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let index = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("Books.searchindex").path
        _ = FileManager.default.createFile(atPath: index + ".lock", contents: Data("theirs\n".utf8))
        #expect(chown(index + ".lock", 65534, 65534) == 0)
        let result = try CLI.run(["index", "--store", store, "--index", index])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: index + ".lock")) == Data("theirs\n".utf8))
    }

    @Test("control characters and bidirectional overrides in store text are escaped in tables")
    func escapedTables() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            for name in ["NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"] {
                db.add(function: DatabaseFunction(name, argumentCount: 5, pure: false) { _ in nil })
            }
        }
        let queue = try DatabaseQueue(path: store, configuration: configuration)
        try queue.write { db in
            try db.execute(sql: "UPDATE ZBOOK SET ZTITLE = 'hostile ' || char(27) || ']0;pwned' || char(7) || char(13) || 'x-coredata://EVIL/Book/p1' || char(8238) || 'txt' WHERE Z_PK = 1")
        }
        try queue.close()
        #expect(try CLI.run(["index", "--store", store, "--quiet"]).status == 0)
        for arguments in [["search", "hostile", "--store", store, "--format", "table"], ["dump", "--store", store, "--format", "table"],
                          ["resolve", "--store", store, "--format", "table", "x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/Book/p1"]] {
            let result = try CLI.run(arguments, environment: ["COLUMNS": "400"])
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let controls = result.stdout.unicodeScalars.filter { ($0.properties.generalCategory == .control && $0 != "\n") || $0.value == 0x202E }
            #expect(controls.isEmpty, "\(arguments)")
            if arguments[0] != "dump" { #expect(result.stdout.contains("\\u{1B}]0;pwned"), "\(arguments)") }
        }
    }

    func files(_ folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            result[name] = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) ?? Data()
        }
        return result
    }

    @Test("a symbolic link at the index path, dangling or not, is never written through")
    func symlinkedIndex() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        let index = folder.appendingPathComponent("Books.searchindex").path
        let dangling = folder.appendingPathComponent("created-through-link").path
        try FileManager.default.createSymbolicLink(atPath: index, withDestinationPath: dangling)
        var result = try CLI.run(["index", "--store", store, "--index", index])
        #expect(result.status == 65 && result.stderr.contains("symbolic link"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dangling))

        let target = try victim(in: folder)
        try FileManager.default.removeItem(atPath: index)
        try FileManager.default.createSymbolicLink(atPath: index, withDestinationPath: target.path)
        result = try CLI.run(["index", "--store", store, "--index", index])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(try Data(contentsOf: target) == Data("precious\n".utf8))
    }

    @Test("symbolic links planted at the index's -wal and -shm are never written through")
    func symlinkedCompanions() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        let target = try victim(in: folder)
        let index = folder.appendingPathComponent("Books.searchindex").path
        for suffix in ["-wal", "-shm"] {
            try FileManager.default.createSymbolicLink(atPath: index + suffix, withDestinationPath: target.path)
            let result = try CLI.run(["index", "--store", store, "--index", index])
            #expect(result.status == 65 && result.stderr.contains("symbolic link"), "\(result.stderr)")
            #expect(try Data(contentsOf: target) == Data("precious\n".utf8))
            try FileManager.default.removeItem(atPath: index + suffix)
        }
    }

    @Test("an empty file another user created at the index path is refused", .enabled(if: getuid() == 0, "needs root to give a file to another user"))
    func foreignEmptyIndex() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let index = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("Books.searchindex").path
        _ = FileManager.default.createFile(atPath: index, contents: Data(), attributes: [.posixPermissions: 0o666])
        #expect(chown(index, 65534, 65534) == 0)
        let result = try CLI.run(["index", "--store", store, "--index", index])
        #expect(result.status == 65 && result.stderr.contains("another user"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: index)).isEmpty)
    }

    @Test("the index can never be the store, by either path or by a store named like an index")
    func indexIsTheStore() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        let before = try files(folder)
        var result = try CLI.run(["index", "--store", store, "--index", store])
        #expect(result.status == 65, "\(result.stderr)")
        let link = folder.appendingPathComponent("alias.searchindex").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: store)
        result = try CLI.run(["index", "--store", store, "--index", link])
        #expect(result.status == 65, "\(result.stderr)")
        try FileManager.default.removeItem(atPath: link)
        #expect(try files(folder) == before)

        // A store whose name ends in .searchindex: its default index path is the store itself.
        let named = folder.appendingPathComponent("Trap.searchindex").path
        try FileManager.default.moveItem(atPath: store, toPath: named)
        let moved = try files(folder)
        result = try CLI.run(["index", "--store", named])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("choose another path for the index (--index)") && !result.stderr.contains("remove it"), "\(result.stderr)")
        #expect(try files(folder) == moved)
    }

    @Test("another program's SQLite file at the index path is refused and left byte-identical")
    func foreignDatabase() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        let index = folder.appendingPathComponent("Books.searchindex").path
        let queue = try DatabaseQueue(path: index)
        try queue.write { db in try db.execute(sql: "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')") }
        try queue.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: index))
        let result = try CLI.run(["index", "--store", store, "--index", index])
        #expect(result.status == 65 && result.stderr.contains("not a Searchlight index"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: index)) == before)
        #expect(!FileManager.default.fileExists(atPath: index + "-wal"))
    }

    @Test("index modes come from the resolved store's permission bits, and follow the store when it is tightened")
    func modes() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        try FileManager.default.setAttributes([.posixPermissions: 0o6640], ofItemAtPath: store) // setuid, setgid
        let link = folder.appendingPathComponent("Linked.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: store)
        let index = folder.appendingPathComponent("Linked.searchindex").path
        #expect(try CLI.run(["index", "--store", link, "--index", index]).status == 0)
        func mode(_ path: String) throws -> Int { try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1 }
        #expect(try mode(index) == 0o640)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store)
        #expect(try CLI.run(["index", "--store", link, "--index", index]).status == 0)
        #expect(try mode(index) == 0o600)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: index + suffix) {
            #expect(try mode(index + suffix) & 0o077 == 0)
        }
    }

    @Test("temporaries left by killed runs are removed")
    func staleTemporaries() throws {
        let store = try CLI.copyStore("SampleModel3_V1")
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        // A pid far above any the kernel hands out here.
        let leftover = folder.appendingPathComponent(".Books.searchindex.creating-999999999").path
        _ = FileManager.default.createFile(atPath: leftover, contents: Data("half".utf8))
        #expect(try CLI.run(["index", "--store", store, "--index", folder.appendingPathComponent("Books.searchindex").path]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }
}
