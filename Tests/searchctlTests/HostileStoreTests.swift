import Foundation
import GRDB
import Testing
import TestScratch

/// Stores whose bookkeeping, metadata or history hold values of the wrong type, or that lack what
/// Core Data always writes: every command answers with a documented exit code and one line, never a
/// signal and never exit 70.
@Suite("Hostile stores", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)), .ownThread)
struct HostileStoreTests {
    static let mutations: [String] = [
        "UPDATE Z_PRIMARYKEY SET Z_SUPER = 'x' WHERE Z_ENT = 2",
        "UPDATE Z_PRIMARYKEY SET Z_MAX = 'lots'",
        "UPDATE Z_PRIMARYKEY SET Z_NAME = x'00ff' WHERE Z_ENT = 1",
        "UPDATE Z_PRIMARYKEY SET Z_SUPER = 2.5 WHERE Z_ENT = 2",
        "UPDATE Z_METADATA SET Z_UUID = 42",
        "UPDATE Z_METADATA SET Z_UUID = 'EVIL' || char(10) || 'x-coredata://EVIL/Book/p1'",
        "UPDATE Z_METADATA SET Z_UUID = x'ffff'",
        "UPDATE Z_METADATA SET Z_PLIST = 'not a plist'",
        "UPDATE Z_METADATA SET Z_PLIST = 12.5",
        "DELETE FROM Z_METADATA",
        "UPDATE Z_MODELCACHE SET Z_CONTENT = 7",
        "UPDATE Z_MODELCACHE SET Z_CONTENT = randomblob(4000)",
        "UPDATE Z_MODELCACHE SET Z_CONTENT = x''",
        "UPDATE ATRANSACTION SET ZTIMESTAMP = 'yesterday'",
        "UPDATE ATRANSACTION SET ZTIMESTAMP = 1e308 * 10",
        "UPDATE ATRANSACTION SET ZBUNDLEIDTS = 'x'",
        "UPDATE ATRANSACTIONSTRING SET ZNAME = x'ff' WHERE Z_PK = 1",
        "UPDATE ATRANSACTIONSTRING SET ZNAME = 3.5 WHERE Z_PK = 1",
        "UPDATE ACHANGE SET ZENTITY = 'Book'",
        "UPDATE ACHANGE SET ZENTITYPK = x'01'",
        "UPDATE ACHANGE SET ZCHANGETYPE = 99",
        "UPDATE ACHANGE SET ZCHANGETYPE = 'insert'",
        "UPDATE ACHANGE SET ZTRANSACTIONID = 'one'",
        "UPDATE ACHANGE SET ZCOLUMNS = 'text'",
        "ALTER TABLE ACHANGE DROP COLUMN ZENTITYPK",
        "DROP TABLE ATRANSACTIONSTRING",
        "DROP TABLE ZPAGE",
        "UPDATE ZBOOK SET ZTITLE = x'ff00fe'",
        "UPDATE ZBOOK SET Z_ENT = 'x' WHERE Z_PK = 1",
        "UPDATE ZBOOK SET Z_OPT = 'v'",
        "UPDATE ZPAGE SET ZBOOK = 'abc'",
        "UPDATE ZPAGE SET Z1_BOOK = 'abc'",
        "UPDATE ZBOOK SET ZPUBLISHEDAT = 'Tuesday'",
        "UPDATE ZBOOK SET ZPRICE = 1e308 * 10",
        "UPDATE ZBOOK SET ZUNIQUEID = 'not-a-uuid' WHERE Z_PK = 1",
    ]

    @Test("every command on a store with a hostile value", arguments: mutations)
    func hostile(mutation: String) throws {
        let path = try CLI.copyStore("SampleModel2_V1")
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            // Core Data's derived-attribute triggers call these functions.
            for name in ["NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"] {
                db.add(function: DatabaseFunction(name, argumentCount: 5, pure: false) { _ in nil })
            }
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in try db.execute(sql: mutation) }
        try queue.close()
        let index = path + ".searchindex"
        let commands: [[String]] = [
            ["model", "--store", path, "--format", "text"],
            ["history", "--store", path, "--limit", "50"],
            ["index", "--store", path, "--index", index],
            ["search", "title", "--index", index, "--format", "json"],
            ["dump", "--index", index],
            ["resolve", "x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/Book/p1", "--store", path],
        ]
        for arguments in commands {
            let result = try CLI.run(arguments)
            let context = "\(mutation) → searchctl \(arguments.joined(separator: " ")): \(result.status) \(result.stderr)"
            #expect(!result.signaled, "\(context)")
            #expect([0, 1, 65, 66].contains(result.status), "\(context)")
            if result.status > 1 {
                let lines = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("searchctl: note:") && !$0.hasPrefix("{\"note\":") }
                // With --format json the one line is a JSON error object.
                let json = arguments.contains("json")
                #expect(lines.count == 1 && (json ? lines[0].hasPrefix("{\"error\":") : lines[0].hasPrefix("searchctl: error:")), "\(context)")
            }
            // Store values never forge output lines: every URI printed is one of this store's.
            for line in result.stdout.split(separator: "\n") where line.contains("x-coredata://") && !line.hasPrefix("{") && !line.hasPrefix(" ") {
                #expect(line.hasPrefix("x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/"), "\(context)")
            }
        }
    }
}

/// An index damaged by hand or by a disk: every reading command answers with exit 65 and "rebuild it", never a signal.
@Suite("Damaged indexes", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)), .ownThread)
struct DamagedIndexTests {
    @Test("wrong-typed values in the index's tables", arguments: [
        "UPDATE items SET entity = x'00'", "UPDATE items SET rank = 'high'", "UPDATE items SET latitude = 'north'",
        "UPDATE items SET display_name = 3.5", "UPDATE item_texts SET text = x'ff'", "UPDATE stores SET token = 'x'",
        "UPDATE stores SET updated_at = 'yesterday'", "UPDATE stores SET path = 7", "UPDATE stores SET token_timestamp = 'noon'",
        // Tables a tool dropped, and the typo dictionary's chunks overwritten (read by `interestng`, a typo of a term in them).
        "DROP TABLE term_windows", "DROP TABLE leader_terms", "UPDATE term_windows SET terms = x'ff'", "UPDATE term_windows SET low = 7",
    ])
    func damaged(mutation: String) throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        #expect(try CLI.run(["index", "--store", store, "--quiet"]).status == 0)
        let index = URL(fileURLWithPath: store).deletingPathExtension().appendingPathExtension("searchindex").path
        let queue = try DatabaseQueue(path: index)
        try queue.write { db in try db.execute(sql: mutation) }
        try queue.close()
        for arguments in [["dump"], ["status"], ["search", "title"], ["search", "title", "--format", "table"], ["explain", "title"], ["search", "interestng"],
                          ["resolve", "--index", index, "x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/Book/p1"], ["index", "--store", store]] {
            let result = try CLI.run(arguments.contains("--index") || arguments[0] == "index" ? arguments : arguments + ["--index", index])
            #expect(!result.signaled, "\(mutation) → \(arguments): \(result.stderr)")
            #expect([0, 1, 65, 66].contains(result.status), "\(mutation) → \(arguments): \(result.status) \(result.stderr)")
            if result.status == 65 { #expect(result.stderr.contains("rebuild it") || result.stderr.contains("not a Searchlight index"), "\(result.stderr)") }
        }
    }
}
