import CoreDataStore
import CoreDataStoreWriter
import Foundation
import Testing
import TestScratch

@Suite("searchctl index --follow", .ownThread)
struct FollowTests {
    @Test("saves become findable while following; SIGTERM exits 0")
    func follow() throws {
        let directory = Scratch.folder.appendingPathComponent("follow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("Places.sqlite").path
        let writer = try StoreWriter.create(at: store, model: try ManagedObjectModel(contentsOf: IndexCrashTests.corpusModel))
        var seed = SaveRequest()
        for index in 0..<50 { seed.insert("Place", attributes: ["name": .string("town\(index)"), "latitude": .double(0), "longitude": .double(0)]) }
        let places = try writer.save(seed).insertedObjectIDs

        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["index", "--store", store, "--follow", "--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(20)
        while try CLI.run(["search", "town7", "--store", store]).status != 0 {
            guard Date() < deadline else { Issue.record("the first export never became searchable"); return }
            usleep(50_000)
        }
        var latencies: [Double] = []
        for round in 0..<5 {
            var save = SaveRequest()
            save.update(.saved(places[round]), attributes: ["name": .string("zephyrfollow\(round)")])
            try writer.save(save)
            let saved = Date()
            while try CLI.run(["search", "zephyrfollow\(round)", "--store", store]).status != 0 {
                guard Date().timeIntervalSince(saved) < 10 else { Issue.record("save \(round) never became searchable"); return }
                usleep(20_000)
            }
            latencies.append(Date().timeIntervalSince(saved))
        }
        #expect(latencies.count == 5)
        kill(process.processIdentifier, SIGTERM)
        let stopDeadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < stopDeadline { usleep(20_000) }
        #expect(!process.isRunning && process.terminationReason == .exit && process.terminationStatus == 0)
    }

    @Test("one process follows two stores into one index: --store twice, a summary line per catch-up naming the store")
    func twoStores() throws {
        let directory = Scratch.folder.appendingPathComponent("follow-two-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let model = try ManagedObjectModel(contentsOf: IndexCrashTests.corpusModel)
        var stores: [(path: String, writer: StoreWriter, ids: [ManagedObjectID])] = []
        for name in ["North", "South"] {
            let path = directory.appendingPathComponent("\(name).sqlite").path
            let writer = try StoreWriter.create(at: path, model: model)
            var seed = SaveRequest()
            for index in 0..<20 { seed.insert("Place", attributes: ["name": .string("\(name.lowercased())\(index)")]) }
            stores.append((path, writer, try writer.save(seed).insertedObjectIDs))
        }
        let index = directory.appendingPathComponent("Both.searchindex").path
        // Without --index, two stores have no one default index.
        let refused = try CLI.run(["index", "--store", stores[0].path, "--store", stores[1].path])
        #expect(refused.status == 64 && refused.stderr.contains("--index"), "\(refused.stderr)")
        // One store by two names: refused, saying so (not taken for a copy the index follows).
        let twice = try CLI.run(["index", "--store", stores[0].path, "--store", directory.appendingPathComponent("./North.sqlite").path,
                                 "--index", directory.appendingPathComponent("Twice.searchindex").path])
        #expect(twice.status == 64 && twice.stderr.contains("are one store file; give it to --store once"), "\(twice.stderr)")
        // The same spelling twice, without --index: the repetition is what is wrong, not the missing index.
        let repeated = try CLI.run(["index", "--store", stores[0].path, "--store", stores[0].path])
        #expect(repeated.status == 64 && repeated.stderr.contains("is given to --store twice: give each store once"), "\(repeated.stderr)")

        let output = directory.appendingPathComponent("lines.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["index", "--store", stores[0].path, "--store", stores[1].path, "--index", index, "--follow"]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(20)
        for (store, word) in [(stores[0], "northrenamed"), (stores[1], "southrenamed")] {
            while try CLI.run(["search", "\(word.prefix(5))1", "--index", index]).status != 0 {
                guard Date() < deadline else { Issue.record("the first exports never became searchable"); return }
                usleep(50_000)
            }
            var save = SaveRequest()
            save.update(.saved(store.ids[0]), attributes: ["name": .string(word)])
            try store.writer.save(save)
            while try CLI.run(["search", word, "--index", index]).status != 0 {
                guard Date() < deadline else { Issue.record("\(word) never became searchable"); return }
                usleep(20_000)
            }
        }
        kill(process.processIdentifier, SIGTERM)
        let stopDeadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < stopDeadline { usleep(20_000) }
        #expect(!process.isRunning && process.terminationReason == .exit && process.terminationStatus == 0)
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map(String.init)
        for store in stores {
            let own = lines.filter { $0.hasPrefix("indexed \(store.path):") }
            #expect(own.first?.contains("20 inserted") == true && own.contains { $0.contains("1 updated") }, "\(lines)")
        }
    }

    @Test("a store replaced under the follower is opened again, re-indexed and followed on")
    func replacedWhileFollowing() throws {
        let directory = Scratch.folder.appendingPathComponent("follow-replace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("Places.sqlite").path
        let model = try ManagedObjectModel(contentsOf: IndexCrashTests.corpusModel)
        func write(_ path: String, names: [String]) throws -> StoreWriter {
            let writer = try StoreWriter.create(at: path, model: model)
            var save = SaveRequest()
            for name in names { save.insert("Place", attributes: ["name": .string(name), "latitude": .double(1), "longitude": .double(2)]) }
            try writer.save(save)
            return writer
        }
        _ = try write(store, names: ["oldtown", "oldcity"])
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["index", "--store", store, "--follow"]
        let errors = directory.appendingPathComponent("stderr.txt")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func waitUntil(_ what: String, _ condition: () throws -> Bool) throws -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while try !condition() {
                guard Date() < deadline, process.isRunning else {
                    Issue.record("\(what); stderr: \((try? String(contentsOf: errors, encoding: .utf8)) ?? "")")
                    return false
                }
                usleep(50_000)
            }
            return true
        }
        guard try waitUntil("the first export never became searchable", { try CLI.run(["search", "oldtown", "--store", store]).status == 0 }) else { return }

        // Another store moved into place atomically, as an app restoring a backup would.
        let replacement = directory.appendingPathComponent("incoming.sqlite").path
        do {
            // Closed before the move: a connection open across a rename would keep the old name's -shm.
            let writer = try write(replacement, names: ["newtown"])
            try writer.checkpoint()
        }
        for suffix in ["-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: store + suffix)
            try? FileManager.default.removeItem(atPath: replacement + suffix)
        }
        guard rename(replacement, store) == 0 else { Issue.record("rename failed"); return }
        guard try waitUntil("the replacement was never indexed", { try CLI.run(["search", "newtown", "--store", store]).status == 0 }) else { return }
        #expect(try CLI.run(["search", "oldtown", "--store", store]).status == 1)
        #expect(try CLI.run(["dump", "--store", store]).lines.count == 1)
        // It follows the new file: a save to it is found.
        let reopened = try StoreWriter(path: store)
        var save = SaveRequest()
        save.insert("Place", attributes: ["name": .string("brandnew"), "latitude": .double(3), "longitude": .double(4)])
        try reopened.save(save)
        guard try waitUntil("a save to the new store was never indexed", { try CLI.run(["search", "brandnew", "--store", store]).status == 0 }) else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let stderr = try String(contentsOf: errors, encoding: .utf8)
        #expect(process.terminationStatus == 0 && stderr.contains("was replaced by another file: opening it again") && stderr.contains("was replaced (UUID"), "\(stderr)")
    }

    @Test("a store without history cannot be followed", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)))
    func noHistory() throws {
        let result = try CLI.run(["index", "--store", try CLI.copyStore("SampleModel_V1"), "--follow"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("NSPersistentHistoryTrackingKey") && result.stderr.split(separator: "\n").count == 1)
    }
}
