import Foundation
import GRDB
import Testing

/// Files planted where Searchlight writes never make it write elsewhere, and data never reaches the
/// terminal as control sequences.
@Suite("Planted files and hostile text", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)))
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
        FileManager.default.createFile(atPath: index + ".lock", contents: Data("theirs\n".utf8))
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
}
