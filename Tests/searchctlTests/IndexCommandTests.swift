import CoreDataStore
import CoreDataStoreWriter
import Foundation
import Testing
import TestScratch

/// `searchctl index` end to end on the Apple-written stores: rebuilds announced and correct, progress.
@Suite("searchctl index: rebuilds and progress", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)), .ownThread)
struct IndexCommandTests {
    /// URI → display name of every item, through `searchctl dump`.
    func dump(_ store: String) throws -> [String: String] {
        let result = try CLI.run(["dump", "--store", store])
        #expect(result.status == 0)
        var items: [String: String] = [:]
        for line in result.lines {
            let object = try #require(try CLI.json(line) as? [String: Any])
            items[try #require(object["uri"] as? String)] = object["displayName"] as? String
        }
        return items
    }

    /// URI → display name of every object of the store's indexed entities, read from the store itself.
    func truth(_ store: String, displayNames: [String: String]) throws -> [String: String] {
        let opened = try PersistentStore(path: store)
        var items: [String: String] = [:]
        try opened.read { snapshot throws in
            for (entity, attribute) in displayNames {
                for object in try snapshot.objects(ofEntity: entity, limit: 100_000, relationships: .toOneOnly) where object.entityName == entity {
                    items[object.objectID.uriRepresentation] = object.attributes[attribute].flatMap { value -> String? in
                        if case .string(let text) = value { return text }
                        if case .integer(let number) = value { return String(number) }
                        return nil
                    } ?? ""
                }
            }
        }
        return items
    }

    static let sampleModel2Names = ["Book": "title", "GraphicNovel": "title", "Feedback": "authorAlias", "Page": "number", "Author": "alias"]

    @Test("history purged past the token: announced, rebuilt, equal to the store")
    func purged() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        #expect(try CLI.run(["index", "--store", store]).status == 0)
        let writer = try StoreWriter(path: store)
        let books = try PersistentStore(path: store).read { snapshot throws in try snapshot.objects(ofEntity: "Book", limit: 5) }
        for (round, book) in books.enumerated() {
            var save = SaveRequest()
            if round == 0 { save.delete(book.objectID) } else { save.update(.saved(book.objectID), attributes: ["title": .string("purgedrename\(round)")]) }
            try writer.save(save)
        }
        #expect(try writer.purgeHistory(through: 4) > 0)
        let result = try CLI.run(["index", "--store", store])
        #expect(result.status == 0)
        #expect(result.stderr.contains("rebuilding") && result.stderr.contains("history token expired"), "\(result.stderr)")
        #expect(try dump(store) == truth(store, displayNames: Self.sampleModel2Names))
        #expect(try CLI.run(["search", "purgedrename4", "--store", store]).lines == [books[4].objectID.uriRepresentation])
        #expect(try CLI.run(["search", "purgedrename1", "--store", store]).lines.count == 1)
        let status = try #require(try CLI.json(try CLI.run(["status", "--store", store, "--format", "json"]).stdout) as? [String: Any])
        let checkpoint = try #require((status["stores"] as? [[String: Any]])?.first)
        #expect(checkpoint["lag"] as? Int == 0 && checkpoint["token"] as? Int == 6) // the Apple transaction and five saves
    }

    @Test("the store replaced by another at the same path: the old store's items go")
    func replaced() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        #expect(try CLI.run(["index", "--store", store]).status == 0)
        try FileManager.default.removeItem(atPath: store)
        try FileManager.default.copyItem(at: CLI.stores.appendingPathComponent("SampleModel2_V2.sqlite"), to: URL(fileURLWithPath: store))
        let result = try CLI.run(["index", "--store", store])
        #expect(result.status == 0)
        #expect(result.stderr.contains("was replaced") && result.stderr.contains("C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A"), "\(result.stderr)")
        let items = try dump(store)
        #expect(items == (try truth(store, displayNames: Self.sampleModel2Names)))
        #expect(items.keys.allSatisfy { $0.hasPrefix("x-coredata://4B0F5331-DE87-4D61-9947-8A976CCEB627/") } && items.count == 126)
    }

    @Test("a store migrated by Core Data (SampleModel V1 → V2, same UUID): re-exported under the new model")
    func migrated() throws {
        let store = try CLI.copyStore("SampleModel_V1")
        #expect(try CLI.run(["index", "--store", store]).status == 0)
        let before = try dump(store)
        #expect(before.keys.contains { $0.contains("/ExpensiveSportCar/") } && !before.keys.contains { $0.contains("/LuxuryCar/") })
        try FileManager.default.removeItem(atPath: store)
        try FileManager.default.copyItem(at: CLI.stores.appendingPathComponent("SampleModel_V2.sqlite"), to: URL(fileURLWithPath: store))
        let result = try CLI.run(["index", "--store", store])
        #expect(result.status == 0)
        #expect(result.stderr.contains("model changed (migration)"), "\(result.stderr)")
        let after = try dump(store)
        #expect(after.count == before.count)
        #expect(after.keys.contains { $0.contains("/LuxuryCar/") } && !after.keys.contains { $0.contains("/ExpensiveSportCar/") })
    }

    @Test("SIGINT in the middle of a first export: a whole batch, exit 0, and the next run finishes it")
    func interrupted() throws {
        let directory = Scratch.folder.appendingPathComponent("interrupt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("Places.sqlite").path
        let writer = try StoreWriter.create(at: store, model: try ManagedObjectModel(contentsOf: IndexCrashTests.corpusModel))
        for first in stride(from: 0, to: 30_000, by: 5_000) {
            var save = SaveRequest()
            for index in first..<first + 5_000 {
                save.insert("Place", attributes: ["name": .string("place\(index)"), "latitude": .double(Double(index % 90)), "longitude": .double(0)])
            }
            try writer.save(save)
        }
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["index", "--store", store, "--batch-size", "100"]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        // Interrupt once the first pages are committed.
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline {
            let status = try CLI.run(["status", "--store", store, "--format", "json"])
            if status.status == 0, let json = try CLI.json(status.stdout) as? [String: Any],
               let items = json["items"] as? [String: Int], (items["Place"] ?? 0) > 0 { break }
            usleep(20_000)
        }
        kill(process.processIdentifier, SIGINT)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(stderr)")
        let json = try #require(try CLI.json(try CLI.run(["status", "--store", store, "--format", "json"]).stdout) as? [String: Any])
        let indexed = (json["items"] as? [String: Int])?["Place"] ?? 0
        // Stopped between pages: whole batches only, and the export is marked unfinished.
        #expect(stderr.contains("stopped by a signal"), "\(stderr)")
        #expect(indexed % 100 == 0 && indexed < 30_000, "\(indexed)")
        // How far it came, counted in objects: every committed page, of the 30,000 the store held.
        let export = try #require((json["stores"] as? [[String: Any]])?.first?["export"] as? [String: Any])
        #expect(export["kind"] as? String == "firstExport" && export["objectsExported"] as? Int == indexed && export["objectCount"] as? Int == 30_000, "\(export)")
        #expect(stderr.contains("first export in progress (") && stderr.contains(" of 30,000 objects") && stderr.contains("resume it where it stopped"), "\(stderr)")
        let search = try CLI.run(["search", "place1", "--store", store])
        #expect(search.stderr.contains("of 30,000 objects") && search.stderr.contains("results are incomplete"), "\(search.stderr)")
        let rerun = try CLI.run(["index", "--store", store])
        #expect(rerun.status == 0 && !rerun.stderr.contains("rebuilding"), "\(rerun.stderr)")
        let names = try CLI.run(["dump", "--store", store]).lines.compactMap { (try? CLI.json($0) as? [String: Any])?["displayName"] as? String }
        #expect(names.count == 30_000 && Set(names).count == 30_000)
    }

    @Test("--progress reports a first export in plain lines when stderr is not a terminal; not by default")
    func progress() throws {
        let store = try CLI.copyStore("SampleModel2_V1")
        let shown = try CLI.run(["index", "--store", store, "--progress", "--batch-size", "500"])
        #expect(shown.status == 0)
        let lines = shown.stderr.split(separator: "\n").filter { $0.hasPrefix("searchctl: progress: ") }
        // Every Book, Feedback, Page and Writer row read once (a short export shows only its last line).
        #expect(lines.last?.hasPrefix("searchctl: progress: 5,468 of 5,468 objects (100%), ") == true, "\(shown.stderr)")
        let quiet = try CLI.run(["index", "--store", store, "--rebuild"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("progress"))
        let both = try CLI.run(["index", "--store", store, "--progress", "--quiet"])
        #expect(both.status == 64 && both.stderr.contains("contradict"))
    }
}
