import Foundation
import Testing
import TestScratch

@Suite("searchctl model, history and resolve", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)), .ownThread)
struct StoreCommandsTests {
    static let uuid = "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A"

    @Test("model: JSON shape, entities sorted, source modelcache")
    func model() throws {
        let result = try CLI.run(["model", "--store", try CLI.copyStore("SampleModel2_V1")])
        #expect(result.status == 0)
        let json = try #require(try CLI.json(result.stdout) as? [String: Any])
        #expect(json["source"] as? String == "modelcache")
        let entities = try #require(json["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Author", "Book", "Feedback", "GraphicNovel", "Page", "Writer"])
        let book = try #require(entities.first { $0["name"] as? String == "Book" })
        #expect(book["parent"] is NSNull && book["abstract"] as? Bool == false)
        let title = try #require((book["attributes"] as? [[String: Any]])?.first { $0["name"] as? String == "title" })
        #expect(title["type"] as? String == "String" && title["optional"] as? Bool == false)
        #expect(title["transient"] as? Bool == false && title["spotlight"] as? Bool == false)
        let pages = try #require((book["relationships"] as? [[String: Any]])?.first { $0["name"] as? String == "pages" })
        #expect(pages["destination"] as? String == "Page" && pages["toMany"] as? Bool == true)
        #expect(pages["ordered"] as? Bool == false && pages["inverse"] as? String == "book")
        #expect(entities.first { $0["name"] as? String == "Writer" }?["abstract"] as? Bool == true)
        #expect(entities.first { $0["name"] as? String == "GraphicNovel" }?["parent"] as? String == "Book")
    }

    @Test("model of SampleModel_V2 shows LuxuryCar, not the stale ExpensiveSportCar; text format reads well")
    func renamedModel() throws {
        let store = try CLI.copyStore("SampleModel_V2")
        let json = try #require(try CLI.json(try CLI.run(["model", "--store", store]).stdout) as? [String: Any])
        let names = (json["entities"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["Car", "LuxuryCar", "Person", "SportCar"])
        let text = try CLI.run(["model", "--store", store, "--format", "text"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("LuxuryCar : SportCar"))
        #expect(text.stdout.contains("owner → Person  [to-one, inverse cars]"))
    }

    @Test("history: transaction 1 with 5,468 inserts, bundle, process and date")
    func history() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        let result = try CLI.run(["history", "--store", store])
        #expect(result.status == 0)
        #expect(result.lines.count == 1)
        let transaction = try #require(try CLI.json(result.lines[0]) as? [String: Any])
        #expect(transaction["transaction"] as? Int == 1)
        #expect((transaction["timestamp"] as? String)?.hasPrefix("2024-05-10T") == true)
        #expect(transaction["bundleID"] as? String == "com.apple.dt.xctest.tool")
        #expect(transaction["processID"] as? String == "xctest")
        #expect(transaction["author"] is NSNull && transaction["contextName"] is NSNull)
        let changes = try #require(transaction["changes"] as? [[String: Any]])
        #expect(changes.count == 5468)
        #expect(changes.allSatisfy { $0["type"] as? String == "insert" && $0["updatedProperties"] is NSNull && $0["tombstone"] is NSNull })
        #expect(changes.contains { $0["uri"] as? String == "x-coredata://\(Self.uuid)/GraphicNovel/p11" })
        #expect(try CLI.run(["history", "--store", store, "--after", "1"]).stdout.isEmpty)
        let table = try CLI.run(["history", "--store", store, "--format", "table"])
        #expect(table.lines.count == 2 && table.lines[1].contains("5468"))
    }

    @Test("resolve: every object built from the rows, through stdin, with per-URI errors and exit codes")
    func resolve() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        let one = try CLI.run(["resolve", "--store", store, "x-coredata://\(Self.uuid)/Book/p1"])
        #expect(one.status == 0)
        let objects = try #require(try CLI.json(one.stdout) as? [[String: Any]])
        let book = try #require(objects.first)
        #expect(book["entity"] as? String == "Book")
        let attributes = try #require(book["attributes"] as? [String: Any])
        #expect(attributes["title"] as? String == "title 2 - author 2")
        #expect((attributes["publishedAt"] as? String)?.hasSuffix("Z") == true)
        #expect((attributes["uniqueID"] as? String)?.count == 36)
        #expect((attributes["cover"] as? [String: Any])?["base64"] is String)
        #expect((book["relationships"] as? [String: Any])?["author"] as? String == "x-coredata://\(Self.uuid)/Author/p1")

        // All 5,468 objects of the history resolve through stdin in one call.
        let history = try CLI.run(["history", "--store", store])
        let transaction = try #require(try CLI.json(history.lines[0]) as? [String: Any])
        let uris = (transaction["changes"] as? [[String: Any]])?.compactMap { $0["uri"] as? String } ?? []
        let all = try CLI.run(["resolve", "--store", store, "--format", "jsonl", "-"], stdin: uris.joined(separator: "\n"))
        #expect(all.status == 0)
        #expect(all.lines.count == 5468)
        #expect(Set(all.lines.compactMap { (try? CLI.json($0) as? [String: Any])?["uri"] as? String }) == Set(uris))

        let missing = try CLI.run(["resolve", "--store", store, "x-coredata://\(Self.uuid)/Book/p1", "x-coredata://\(Self.uuid)/Book/p9999"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("searchctl: error: no object x-coredata://\(Self.uuid)/Book/p9999"))
        // The output lists every URI asked about: the object, then the missing one with its error.
        let missingEntries = try CLI.json(missing.stdout) as? [[String: Any]]
        #expect(missingEntries?.count == 2 && missingEntries?[0]["entity"] as? String == "Book")
        #expect(missingEntries?[1]["uri"] as? String == "x-coredata://\(Self.uuid)/Book/p9999" && missingEntries?[1]["error"] is String)

        for bad in ["x-coredata:///Book/t123", "not-a-uri", "x-coredata://5443A63D-EF0E-44C2-B216-AE8B5ED2FD09/User/p1", "x-coredata://\(Self.uuid)/Spaceship/p1"] {
            let result = try CLI.run(["resolve", "--store", store, bad])
            #expect(result.status == 65, "\(bad)")
            #expect(result.stderr.hasPrefix("searchctl: error: "), "\(bad)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(bad)")
        }
        let lowercase = try CLI.run(["resolve", "--store", store, "--format", "jsonl", "x-coredata://\(Self.uuid.lowercased())/Book/p1"])
        #expect(lowercase.status == 0 && lowercase.stdout.contains("x-coredata://\(Self.uuid)/Book/p1"))
        let table = try CLI.run(["resolve", "--store", store, "--format", "table", "x-coredata://\(Self.uuid)/GraphicNovel/p11"])
        #expect(table.status == 0 && table.stdout.contains("isBlackAndWhite") && table.stdout.contains("true"))
    }

    @Test("resolve --index: each URI in the store the index recorded for its UUID, across two stores")
    func resolveThroughIndex() throws {
        let books = try CLI.copyStore("SampleModel2_V1")
        let cars = try CLI.copyStore("SampleModel_V1")
        let index = URL(fileURLWithPath: books).deletingLastPathComponent().appendingPathComponent("shared.searchindex").path
        #expect(try CLI.run(["index", "--store", books, "--index", index]).status == 0)
        #expect(try CLI.run(["index", "--store", cars, "--index", index]).status == 0)
        // Search hits of both stores, piped into resolve: the deep-link round trip.
        let hits = try CLI.run(["search", "title 13", "--index", index, "--limit", "1"]).lines + (try CLI.run(["search", "FIAT", "--index", index, "--limit", "1"]).lines)
        #expect(hits.count == 2)
        let resolved = try CLI.run(["resolve", "--index", index, "--format", "jsonl", "-"], stdin: hits.joined(separator: "\n"))
        #expect(resolved.status == 0 && resolved.stderr.isEmpty, "\(resolved.stderr)")
        let objects = try resolved.lines.map { try #require(try CLI.json($0) as? [String: Any]) }
        #expect(objects.map { $0["uri"] as? String } == hits)
        #expect(((objects[0]["attributes"] as? [String: Any])?["title"] as? String)?.hasPrefix("title 13") == true)
        #expect((objects[1]["attributes"] as? [String: Any])?["maker"] as? String == "FIAT")
        // SEARCHCTL_INDEX works the same; the same output as resolving in the store itself.
        let environment = try CLI.run(["resolve", "--format", "jsonl", hits[0]], environment: ["SEARCHCTL_INDEX": index])
        let direct = try CLI.run(["resolve", "--store", books, "--format", "jsonl", hits[0]])
        #expect(environment.status == 0 && environment.stdout == direct.stdout)
        // A UUID the index does not know, a missing object, and a recorded store that is gone: per URI.
        let unknown = try CLI.run(["resolve", "--index", index, hits[0], "x-coredata://11111111-2222-3333-4444-555555555555/Book/p1"])
        #expect(unknown.status == 65 && unknown.stderr.contains("holds no store with UUID 11111111-2222-3333-4444-555555555555"))
        let unknownEntries = try CLI.json(unknown.stdout) as? [[String: Any]]
        #expect(unknownEntries?.count == 2 && unknownEntries?.filter { $0["error"] != nil }.count == 1)
        let missing = try CLI.run(["resolve", "--index", index, "x-coredata://\(Self.uuid)/Book/p9999"])
        #expect(missing.status == 1 && missing.stderr.contains("p9999"))
        try FileManager.default.removeItem(atPath: cars)
        let gone = try CLI.run(["resolve", "--index", index, hits[1], hits[0]])
        #expect(gone.status == 66 && gone.stderr.contains("no such file") && gone.stderr.contains("753753D3-A961-4901-AB05-8CC48B1D3853"))
        let goneEntries = try CLI.json(gone.stdout) as? [[String: Any]]
        #expect(goneEntries?.count == 2 && goneEntries?.filter { $0["error"] != nil }.count == 1)
        // Another store copied over the recorded path is not mistaken for the indexed one.
        try FileManager.default.copyItem(at: CLI.stores.appendingPathComponent("SampleModel3_V1.sqlite"), to: URL(fileURLWithPath: cars))
        let replaced = try CLI.run(["resolve", "--index", index, hits[1]])
        #expect(replaced.status == 65 && replaced.stderr.contains("is now another store"))
        let neither = try CLI.run(["resolve", hits[0]], environment: ["SEARCHCTL_INDEX": ""])
        #expect(neither.status == 64 && neither.stderr.contains("--store PATH") && neither.stderr.split(separator: "\n").count == 1)
        #expect(try CLI.run(["resolve", "--index", index, "--store", books, hits[0]]).status == 64)
    }

    @Test("bad input: documented exit codes and one-line messages that say what to do")
    func errors() throws {
        let directory = Scratch.folder.appendingPathComponent("searchctl-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let random = directory.appendingPathComponent("random.sqlite")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: random)
        let truncated = directory.appendingPathComponent("truncated.sqlite")
        try Data(contentsOf: CLI.stores.appendingPathComponent("SampleModel2_V1.sqlite")).prefix(60).write(to: truncated)
        let cases: [([String], Int32, String)] = [
            (["model", "--store", "/nonexistent/App.sqlite"], 66, "no such file"),
            (["model", "--store", random.path], 65, "not an SQLite database"),
            (["model", "--store", truncated.path], 65, "not an SQLite database"),
            (["history", "--store", try CLI.copyStore("SampleModel_V1")], 65, "NSPersistentHistoryTrackingKey"),
            (["model", "--store", try CLI.copyStore("SampleModel3_V1"), "--model",
              CLI.projectRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/models/alemar11__CoreDataPlus__SampleModel/contents").path], 65, "does not match"),
            (["model", "--store", try CLI.copyStore("SampleModel3_V1"), "--model", "/nonexistent/M.xcdatamodeld"], 66, "no such file"),
            (["model"], 64, "--store"),
            (["history", "--store", "x", "--limit", "0"], 64, "--limit"),
            (["resolve", "--store", "x"], 64, "URI"),
            (["model", "--store", "x", "--format", "yaml"], 64, "format"),
            (["frobnicate"], 64, "frobnicate"),
        ]
        for (arguments, status, fragment) in cases {
            let result = try CLI.run(arguments)
            #expect(result.status == status, "\(arguments)")
            #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("SQLite error"), "\(arguments)")
            #expect(result.stderr.hasPrefix("searchctl: error: ") && result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
    }

    @Test("every command's --help has an example")
    func help() throws {
        for command in ["model", "history", "resolve"] {
            let result = try CLI.run([command, "--help"])
            #expect(result.status == 0)
            #expect(result.stdout.contains("Example"), "\(command)")
        }
        let top = try CLI.run(["--help"])
        #expect(top.status == 0 && top.stdout.contains("model") && top.stdout.contains("resolve"))
    }
}
