import CoreDataStore
import CoreDataStoreWriter
import Foundation
@testable import Indexer
import SearchIndex
import Testing
import TestScratch

/// Key paths reach every object once per hop, and an item carries a bounded number of values.
@Suite("Key-path fan-out")
struct KeyPathBoundsTests {
    @Test("a cyclic key path costs the objects it passes, aggregates stay exact, item text is capped")
    func cyclicPath() async throws {
        let (folder, path, writer) = try TestFolder.atlasStore("fanout")
        var save = SaveRequest()
        let country = save.insert("Country", attributes: ["name": .string("Bigland")])
        for index in 0..<1_500 {
            save.insert("Place", attributes: ["name": .string("town\(index)")], relationships: ["country": .toOne(country)])
        }
        _ = try writer.save(save)

        let configuration = try IndexConfiguration(json: Data(#"""
            {"entities": {"Place": {"displayName": "name", "text": ["country.places.country.places.name"],
                                    "rank": "count:(country.places.country.places)"},
                          "Country": false}}
            """#.utf8))
        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: folder.appendingPathComponent("atlas.searchindex").path, mode: .readWrite(permissions: nil))
        let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(configuration, model: store.model))
        // 1,500 places each reaching 1,500² objects without deduplication: 3.4 billion steps.
        let summary = try await exporter.catchUp()
        #expect(summary.inserted == 1_500)
        let item = try #require(try await index.dump().first)
        // Deduplicated per hop, the cycle reaches each of the 1,500 places once; the item keeps 1,000 names.
        #expect(item.text.count == ItemBuilder.maximumValues)
        #expect(Set(item.text).count == ItemBuilder.maximumValues)
        // An aggregate sees every object, not a capped list.
        #expect(try await index.dump().allSatisfy { $0.rank == 1_500 })
    }
}

/// A follower never writes on into an index file that was deleted or replaced under it.
@Suite("Index replaced under a follower", .ownThread)
struct IndexReplacedTests {
    @Test("deleted, then replaced: follow stops with an error naming what happened", arguments: ["deleted", "replaced"])
    func indexGone(how: String) async throws {
        let (folder, path, writer) = try TestFolder.atlasStore("gone")
        var save = SaveRequest()
        save.insert("Place", attributes: ["name": .string("first")])
        _ = try writer.save(save)
        let indexPath = folder.appendingPathComponent("atlas.searchindex").path
        let recorder = ServiceRecorder(indexPath: indexPath, stores: [path])
        try recorder.service.start()
        #expect(await recorder.waitUntilCaughtUp())
        try FileManager.default.removeItem(atPath: indexPath)
        if how == "replaced" { _ = FileManager.default.createFile(atPath: indexPath, contents: Data()) }
        var next = SaveRequest()
        next.insert("Place", attributes: ["name": .string("second")])
        _ = try writer.save(next)
        // The run ends by itself: an app waiting on it hears the end, then the event says why.
        await recorder.service.waitUntilStopped()
        #expect(!recorder.service.isRunning)
        #expect(await recorder.wait { _ in !recorder.stops.isEmpty })
        guard case .index(.indexReplaced(let reportedPath, let reason))?? = recorder.stops.first else {
            Issue.record("follow went on writing into a \(how) index: \(recorder.stops)")
            return
        }
        #expect(reportedPath == indexPath)
        #expect(reason == (how == "deleted" ? "was deleted" : "was replaced by another file"))
    }
}
