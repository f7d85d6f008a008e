import CoreDataStore
import CoreDataStoreWriter
import Foundation
import Testing
import TestScratch

/// Kills `searchctl index` with SIGKILL at random moments while an app keeps saving, then checks that the
/// index equals the store: nothing missing, duplicated or stale.
@Suite("searchctl index under SIGKILL", .ownThread)
struct IndexCrashTests {
    final class Flag: @unchecked Sendable {
        // Safe: every access holds `lock`.
        private let lock = NSLock()
        private var value = false
        private var failures: [String] = []
        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
        func fail(_ message: String) { lock.withLock { failures.append(message) } }
        var messages: [String] { lock.withLock { failures } }
    }

    static let corpusModel = CLI.projectRoot.appendingPathComponent("Corpus/Places.xcdatamodeld").path

    @Test("50 kills beside a writer: the final index equals the store")
    func killIndexer() throws {
        let directory = Scratch.folder.appendingPathComponent("index-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("Places.sqlite").path
        let writer = try StoreWriter.create(at: store, model: try ManagedObjectModel(contentsOf: Self.corpusModel))
        var seed = SaveRequest()
        let countries = (0..<20).map { seed.insert("Country", attributes: ["code": .string("C\($0)"), "name": .string("Land\($0)")]) }
        // Enough places that the indexer is still busy when killed: a renamed country re-indexes 300 of them.
        for index in 0..<6_000 {
            seed.insert("Place", attributes: ["name": .string("town\(index)"), "latitude": .double(Double(index % 170) - 85), "longitude": .double(Double(index % 360) - 180)],
                        relationships: ["country": .toOne(countries[index % countries.count])])
        }
        let seeded = try writer.save(seed).insertedObjectIDs
        let countryIDs = Array(seeded.prefix(20))

        // The app: random saves until told to stop.
        let stop = Flag()
        let appDone = DispatchSemaphore(value: 0)
        Thread {
            var generator = SystemRandomNumberGenerator()
            var places = Array(seeded.dropFirst(20))
            var round = 0
            while !stop.isSet {
                round += 1
                var save = SaveRequest(author: "app")
                switch round % 5 {
                case 0: if let victim = places.indices.randomElement(using: &generator) { save.delete(places.remove(at: victim)) }
                case 1: save.insert("Place", attributes: ["name": .string("new\(round)"), "latitude": .double(1), "longitude": .double(2)],
                                    relationships: ["country": .toOne(.saved(countryIDs[round % countryIDs.count]))])
                case 2: if let place = places.randomElement(using: &generator) { save.update(.saved(place), attributes: ["name": .string("renamed\(round)")]) }
                case 3: if let place = places.randomElement(using: &generator) {
                    save.update(.saved(place), relationships: ["country": .toOne(.saved(countryIDs[Int.random(in: 0..<countryIDs.count, using: &generator)]))])
                }
                default: save.update(.saved(countryIDs[round % countryIDs.count]), attributes: ["name": .string("Land\(round)")])
                }
                do {
                    let result = try writer.save(save)
                    places += result.insertedObjectIDs
                } catch {
                    stop.fail("writer: \(error)")
                }
                usleep(2_000)
            }
            appDone.signal()
        }.start()

        // The indexer, killed 50 times at random moments.
        var killed = 0
        for _ in 0..<50 {
            let process = Process()
            process.executableURL = CLI.executable
            process.arguments = ["index", "--store", store, "--batch-size", "40", "--quiet"]
            let errors = directory.appendingPathComponent("stderr.txt")
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
            usleep(UInt32.random(in: 20_000...400_000))
            if process.isRunning { kill(process.processIdentifier, SIGKILL); killed += 1 }
            process.waitUntilExit()
            if process.terminationReason == .exit && process.terminationStatus != 0 {
                stop.fail("index exited \(process.terminationStatus): \((try? String(contentsOf: errors, encoding: .utf8)) ?? "")")
            }
        }
        stop.set()
        appDone.wait()
        #expect(stop.messages.isEmpty, "\(stop.messages)")
        #expect(killed >= 25, "only \(killed) runs were still running when killed")

        let final = try CLI.run(["index", "--store", store, "--quiet"])
        #expect(final.status == 0, "\(final.stderr)")

        // Ground truth from the store.
        let reader = try PersistentStore(path: store)
        var expected: [String: (name: String, country: String?)] = [:]
        try reader.read { snapshot throws in
            let countries = try snapshot.objects(ofEntity: "Country", limit: 1_000, relationships: .toOneOnly)
            let names = Dictionary(countries.map { ($0.objectID, $0.attributes["name"]?.stringValue ?? "") }, uniquingKeysWith: { a, _ in a })
            for country in countries { expected[country.objectID.uriRepresentation] = (country.attributes["name"]?.stringValue ?? "", nil) }
            for place in try snapshot.objects(ofEntity: "Place", limit: 1_000_000, relationships: .toOneOnly) {
                expected[place.objectID.uriRepresentation] = (place.attributes["name"]?.stringValue ?? "", place.toOne["country"].flatMap { names[$0] })
            }
        }
        let dump = try CLI.run(["dump", "--store", store])
        let items = try dump.lines.map { try #require(try CLI.json($0) as? [String: Any]) }
        let uris = items.compactMap { $0["uri"] as? String }
        #expect(uris.count == Set(uris).count, "duplicate items")
        #expect(Set(uris) == Set(expected.keys), "missing \(Set(expected.keys).subtracting(uris).count), stale \(Set(uris).subtracting(expected.keys).count)")
        for item in items {
            guard let uri = item["uri"] as? String, let truth = expected[uri] else { continue }
            #expect(item["displayName"] as? String == truth.name, "\(uri)")
            if let country = truth.country { #expect((item["text"] as? [String])?.contains(country) == true, "\(uri) lacks its country \(country)") }
        }
    }
}
