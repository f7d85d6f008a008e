import CoreDataStore
import Foundation
import Testing

@Suite("searchctl index --follow")
struct FollowTests {
    @Test("saves become findable while following; SIGTERM exits 0")
    func follow() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("follow-\(UUID().uuidString)")
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

    @Test("a store without history cannot be followed", .enabled(if: CLI.fixturesAvailable, Comment(rawValue: CLI.skipMessage)))
    func noHistory() throws {
        let result = try CLI.run(["index", "--store", try CLI.copyStore("SampleModel_V1"), "--follow"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("NSPersistentHistoryTrackingKey") && result.stderr.split(separator: "\n").count == 1)
    }
}
