import CoreDataStore
import CoreDataStoreWriter
import Foundation
import GRDB
@testable import Indexer
import SearchIndex
import Synchronization
import Testing
import TestScratch

/// The service an app embeds: several stores into one index, typed events, stop and restart, reindexing,
/// item producers, registered functions and stalls.
@Suite("IndexingService", .ownThread)
struct IndexingServiceTests {
    /// A store in `folder` holding `count` places named `<prefix><n>`.
    static func store(_ name: String, in folder: URL, prefix: String, count: Int = 10) throws -> (path: String, writer: StoreWriter, ids: [ManagedObjectID]) {
        let path = folder.appendingPathComponent(name).path
        let writer = try StoreWriter.create(at: path, model: try ExpressionTests.model())
        var save = SaveRequest()
        for number in 0..<count { save.insert("Place", attributes: ["name": .string("\(prefix)\(number)")]) }
        return (path, writer, try writer.save(save).insertedObjectIDs)
    }

    /// A new folder with two stores, `A.sqlite` ("alpha…") and `B.sqlite` ("beta…"), and the path of the index
    /// they share.
    static func twoStores(_ label: String) throws -> (a: (path: String, writer: StoreWriter, ids: [ManagedObjectID]),
                                                      b: (path: String, writer: StoreWriter, ids: [ManagedObjectID]), indexPath: String) {
        let folder = try TestFolder.make(label)
        return (try store("A.sqlite", in: folder, prefix: "alpha"), try store("B.sqlite", in: folder, prefix: "beta"),
                folder.appendingPathComponent("Both.searchindex").path)
    }

    static func newestToken(_ path: String) throws -> Int64 { try PersistentStore(path: path).historyBounds().newest }

    /// Display names of the items in `index`, by store UUID.
    static func names(_ index: SearchIndex) throws -> Set<String> { Set(try index.dump().map(\.displayName)) }

    @Test("two stores into one index: one indexDidUpdate per catch-up with the store's token; stopped, edited, restarted where it stopped")
    func twoStores() async throws {
        let (a, b, indexPath) = try Self.twoStores("service-two")
        let recorder = ServiceRecorder(indexPath: indexPath, stores: [a.path, b.path])
        try recorder.service.start()
        #expect(recorder.service.isRunning)
        #expect(await recorder.waitUntilCaughtUp(stores: 2))
        let first = recorder.updates
        #expect(first.map(\.store.path) == [a.path, b.path])
        #expect(first.map(\.token) == [try Self.newestToken(a.path), try Self.newestToken(b.path)])
        #expect(first.allSatisfy { $0.exported && $0.inserted == 10 })
        let uuids = first.map(\.store.uuid)
        #expect(Set(uuids).count == 2)

        // A save in each store: one update each, naming the store and the token of its save.
        for (store, name) in [(a, "alphanew"), (b, "betanew")] {
            let before = recorder.updates.count
            var save = SaveRequest()
            save.update(.saved(store.ids[0]), attributes: ["name": .string(name)])
            try store.writer.save(save)
            let token = try Self.newestToken(store.path)
            #expect(await recorder.wait { _ in recorder.updates.count > before })
            let update = try #require(recorder.updates.last)
            #expect(update.store.path == store.path && update.token == token && update.updated == 1 && update.inserted + update.deleted == 0,
                    "\(update)")
        }
        await recorder.stop()
        #expect(!recorder.service.isRunning)
        #expect(recorder.stops.count == 1 && recorder.stops[0] == nil)

        // Edited while stopped: a restart catches up exactly those saves, from the tokens the index holds.
        var save = SaveRequest()
        save.delete(a.ids[1])
        save.insert("Place", attributes: ["name": .string("alphalate")])
        try a.writer.save(save)
        var other = SaveRequest()
        other.update(.saved(b.ids[2]), attributes: ["name": .string("betalate")])
        try b.writer.save(other)
        let before = recorder.updates.count
        try recorder.service.start()
        #expect(await recorder.waitUntilCaughtUp(stores: 4))
        let resumed = Array(recorder.updates.dropFirst(before))
        #expect(resumed.count == 2, "\(resumed)")
        #expect(resumed.allSatisfy { !$0.exported && $0.rebuildReason == nil })
        #expect(resumed.first { $0.store.path == a.path }.map { ($0.inserted, $0.deleted, $0.updated) } ?? (0, 0, 0) == (1, 1, 0))
        #expect(resumed.first { $0.store.path == b.path }.map { ($0.inserted, $0.deleted, $0.updated) } ?? (0, 0, 0) == (0, 0, 1))
        #expect(resumed.map(\.token) == [try Self.newestToken(a.path), try Self.newestToken(b.path)])
        await recorder.stop()

        let index = try SearchIndex(path: indexPath, mode: .readOnly)
        let expected = Set(["alphanew", "alphalate", "betanew", "betalate"] + (2..<10).map { "alpha\($0)" } + [1] .map { "beta\($0)" }
            + (3..<10).map { "beta\($0)" })
        #expect(try Self.names(index) == expected)
        #expect(Set(try index.checkpoints().map(\.storeUUID)) == Set(uuids))
    }

    @Test("a second service on the same index fails naming the first; one store given twice is refused")
    func oneWriter() async throws {
        let folder = try TestFolder.make("service-writer")
        let a = try Self.store("A.sqlite", in: folder, prefix: "alpha")
        let indexPath = folder.appendingPathComponent("A.searchindex").path
        let first = ServiceRecorder(indexPath: indexPath, stores: [a.path])
        try first.service.start()
        #expect(throws: ExportError.self) { try IndexingService(indexPath: indexPath, stores: [.init(path: a.path)]).start() }
        await first.stop()
        let link = folder.appendingPathComponent("Alias.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: a.path)
        do {
            try IndexingService(indexPath: indexPath, stores: [.init(path: a.path), .init(path: link)]).start()
            Issue.record("one store given twice was accepted")
        } catch .storeGivenTwice(let path, let other, let sameFile) {
            #expect(path == link && other == a.path && sameFile)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("reindex(uris:) builds named objects again, running or not; unknown stores and malformed URIs are errors")
    func reindex() async throws {
        let folder = try TestFolder.make("service-reindex")
        let a = try Self.store("A.sqlite", in: folder, prefix: "alpha")
        let indexPath = folder.appendingPathComponent("A.searchindex").path
        // What the app shows beside an object, kept outside the store: the producer reads it.
        let labels = Labels()
        let tagger = Tagger(labels: labels)
        var store = IndexingService.Store(path: a.path)
        store.producers = ["Place": tagger]
        let recorder = ServiceRecorder(IndexingService(indexPath: indexPath, stores: [store]))
        try recorder.service.start()
        #expect(await recorder.waitUntilCaughtUp())
        labels[a.ids[3].primaryKey] = "flagged"
        let summaries = try await recorder.service.reindex(uris: [a.ids[3].uriRepresentation])
        #expect(summaries.count == 1 && summaries[0].updated == 1 && summaries[0].inserted == 0)
        let index = try SearchIndex(path: indexPath, mode: .readOnly)
        #expect(try await index.search(SearchRequest(query: "flagged")).hits.map(\.uri) == [a.ids[3].uriRepresentation])
        await recorder.stop()

        // Not running: the index is opened for it. An object gone from the store loses its item.
        labels[a.ids[4].primaryKey] = "flagged"
        var save = SaveRequest()
        save.delete(a.ids[5])
        try a.writer.save(save)
        let offline = try await recorder.service.reindex(uris: [a.ids[4].uriRepresentation, a.ids[5].uriRepresentation])
        #expect(offline.count == 1 && offline[0].updated == 1 && offline[0].deleted == 1)
        #expect(Set(try await index.search(SearchRequest(query: "flagged")).hits.map(\.uri)) == [a.ids[3].uriRepresentation, a.ids[4].uriRepresentation])

        do {
            try await recorder.service.reindex(uris: ["x-coredata://00000000-0000-0000-0000-000000000000/Place/p1"])
            Issue.record("a URI of another store was accepted")
        } catch .unknownStore(let uuid) {
            #expect(uuid == "00000000-0000-0000-0000-000000000000")
        } catch {
            Issue.record("unexpected \(error)")
        }
        await #expect(throws: ExportError.self) { try await recorder.service.reindex(uris: ["not a uri"]) }
    }

    @Test("an ItemProducer reshapes and skips items; an object it starts skipping loses its item; a new version rebuilds")
    func producers() async throws {
        let folder = try TestFolder.make("service-producer")
        let a = try Self.store("A.sqlite", in: folder, prefix: "place")
        let indexPath = folder.appendingPathComponent("A.searchindex").path
        let hideSecrets = ClosureItemProducer { object, proposed in
            guard !proposed.displayName.hasPrefix("secret") else { return nil }
            var item = proposed
            item.keywords.append("visible")
            item.uri = "x-coredata://forged/Place/p1" // ignored: an item stays its object's
            return item
        }
        var store = IndexingService.Store(path: a.path)
        store.producers = ["Place": hideSecrets]
        let recorder = ServiceRecorder(IndexingService(indexPath: indexPath, stores: [store]))
        var save = SaveRequest()
        save.update(.saved(a.ids[0]), attributes: ["name": .string("secret garden")])
        try a.writer.save(save)
        try recorder.service.start()
        #expect(await recorder.waitUntilCaughtUp())
        let index = try SearchIndex(path: indexPath, mode: .readOnly)
        #expect(try await index.dump().count == 9)
        #expect(try await index.count(SearchRequest(query: "visible")) == 9)
        #expect(try await index.dump().allSatisfy { $0.uri.hasPrefix("x-coredata://\(a.ids[0].storeUUID)/") })

        var hide = SaveRequest()
        hide.update(.saved(a.ids[1]), attributes: ["name": .string("secret cave")])
        try a.writer.save(hide)
        #expect(await recorder.wait { _ in recorder.updates.last?.deleted == 1 })
        #expect(try await index.dump().count == 8)
        await recorder.stop()

        // A producer that now returns something else for the same objects says so with its version.
        store.producers = ["Place": ClosureItemProducer(version: "2") { _, proposed in proposed }]
        let next = ServiceRecorder(IndexingService(indexPath: indexPath, stores: [store]))
        try next.service.start()
        #expect(await next.waitUntilCaughtUp())
        await next.stop()
        #expect(next.updates.first?.rebuildReason == .configurationChanged)
        #expect(try await index.dump().count == 10)
        #expect(try await index.count(SearchRequest(query: "visible")) == 0)
    }

    @Test("FUNCTION selectors: registered ones reach the service's items; unknown ones are refused at their position")
    func functions() async throws {
        let folder = try TestFolder.make("service-functions")
        let a = try Self.store("A.sqlite", in: folder, prefix: "quiet")
        let indexPath = folder.appendingPathComponent("A.searchindex").path
        let configuration = IndexConfiguration(entities: ["Place": .fields(.init(displayName: "FUNCTION(name, 'shout:')"))])
        var store = IndexingService.Store(path: a.path, configuration: configuration)
        do {
            try IndexingService(indexPath: indexPath, stores: [store]).start()
            Issue.record("an unknown selector was accepted")
        } catch .configuration(let message) {
            #expect(message.contains("at character 16") && message.contains("'shout:'"), "\(message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
        store.functions.register("shout:") { receiver, _ in .string(receiver.texts.joined().uppercased()) }
        let recorder = ServiceRecorder(IndexingService(indexPath: indexPath, stores: [store]))
        try recorder.service.start()
        #expect(await recorder.waitUntilCaughtUp())
        await recorder.stop()
        let index = try SearchIndex(path: indexPath, mode: .readOnly)
        #expect(try Self.names(index) == Set((0..<10).map { "QUIET\($0)" }))
    }

    @Test("an index another process keeps locked stalls the service, which goes on once the lock is gone")
    func stalls() async throws {
        let folder = try TestFolder.make("service-stall")
        let a = try Self.store("A.sqlite", in: folder, prefix: "alpha")
        let indexPath = folder.appendingPathComponent("A.searchindex").path
        var timing = IndexingService.Timing()
        timing.busyTimeout = 0.2
        timing.busyRetryInterval = 0.1
        let recorder = ServiceRecorder(indexPath: indexPath, stores: [a.path], timing: timing)
        try recorder.service.start()
        #expect(await recorder.waitUntilCaughtUp())
        // Another writer holds the index's write lock.
        var unsafe = Configuration()
        unsafe.allowsUnsafeTransactions = true
        let intruder = try DatabaseQueue(path: indexPath, configuration: unsafe)
        try intruder.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        var save = SaveRequest()
        save.update(.saved(a.ids[0]), attributes: ["name": .string("patient")])
        try a.writer.save(save)
        // The stall names the file that is locked: the index, not the store.
        #expect(await recorder.wait { events in events.contains { if case .stalled(indexPath, _) = $0 { true } else { false } } })
        #expect(recorder.service.isRunning)
        try intruder.inDatabase { db in try db.execute(sql: "COMMIT") }
        #expect(await recorder.wait { events in events.contains { if case .resumed(a.path) = $0 { true } else { false } } })
        let index = try SearchIndex(path: indexPath, mode: .readOnly)
        #expect(await recorder.wait { _ in (try? index.count(SearchRequest(query: "patient"))) == 1 })
        await recorder.stop()
        #expect(recorder.stops.count == 1 && recorder.stops[0] == nil)
    }

    @Test("runs take turns: a stop asked before any run ends the next at once; during a catch-up, start() is refused and a reindex is served by it")
    func runsTakeTurns() async throws {
        let folder = try TestFolder.make("service-turns")
        let a = try Self.store("A.sqlite", in: folder, prefix: "alpha")
        let indexPath = folder.appendingPathComponent("A.searchindex").path
        var options = IndexingService.Options()
        options.timing.busyTimeout = 10
        let service = IndexingService(indexPath: indexPath, stores: [.init(path: a.path)], options: options)
        // A signal before the run began (the command line's window): the run stops before its first store.
        service.requestStop()
        #expect(try await service.catchUp().isEmpty)
        #expect(try await service.catchUp().first?.inserted == 10)

        // Another process holds the index's write lock: the next catch-up waits inside its run.
        var unsafe = Configuration()
        unsafe.allowsUnsafeTransactions = true
        let intruder = try DatabaseQueue(path: indexPath, configuration: unsafe)
        try intruder.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        var save = SaveRequest()
        save.update(.saved(a.ids[0]), attributes: ["name": .string("held")])
        try a.writer.save(save)
        // On a thread of its own: a task of the cooperative pool waited over 10 s to start once, while the
        // full suite's other tests held the pool's two threads, and start() then met the intruder's lock.
        let catchUp = ThreadExecutor.detachedTask(named: "test catch-up") { () async -> Result<[Exporter.Summary], ExportError> in
            do throws(ExportError) { return .success(try await service.catchUp()) } catch { return .failure(error) }
        }
        let deadline = Date().addingTimeInterval(10)
        while !service.isRunning && Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        do {
            try service.start()
            Issue.record("start() during a catch-up was accepted")
        } catch .alreadyRunning {
        } catch {
            Issue.record("unexpected \(error)")
        }
        let reindex = Task { try await service.reindex(uris: [a.ids[4].uriRepresentation]) }
        try await Task.sleep(nanoseconds: 200_000_000)
        try intruder.inDatabase { db in try db.execute(sql: "COMMIT") }
        let summaries = try await catchUp.value.get()
        #expect(summaries.first?.updated == 1)
        let served = try await reindex.value
        #expect(served.count == 1 && served[0].unchanged + served[0].updated == 1, "\(served)")
        #expect(!service.isRunning)
    }

    @Test("a reindex asked as a run ends (the run took its last requests) is served by a run of its own, not refused")
    func reindexAsRunEnds() async throws {
        let folder = try TestFolder.make("service-reindex-end")
        let a = try Self.store("A.sqlite", in: folder, prefix: "alpha")
        let indexPath = folder.appendingPathComponent("A.searchindex").path
        let service = IndexingService(indexPath: indexPath, stores: [.init(path: a.path)])
        #expect(try await service.catchUp().first?.inserted == 10)
        // A run that has taken its last requests but not yet ended: the window a CI machine's load once hit.
        let control = try await service.begin(follows: false)
        _ = control.close()
        let reindex = Task { try await service.reindex(uris: [a.ids[4].uriRepresentation]) }
        try await Task.sleep(nanoseconds: 200_000_000)
        service.end(control, error: nil, announce: false)
        let served = try await reindex.value
        #expect(served.count == 1 && served[0].unchanged + served[0].updated == 1, "\(served)")
        #expect(!service.isRunning)
    }

    @Test("deleteIndex stops the service and removes its stores' items; the file goes with the last store; start exports anew")
    func deleteIndex() async throws {
        let (a, b, indexPath) = try Self.twoStores("service-delete")
        let both = ServiceRecorder(indexPath: indexPath, stores: [a.path, b.path])
        try both.service.start()
        #expect(await both.waitUntilCaughtUp(stores: 2))
        await both.stop()

        let onlyA = ServiceRecorder(indexPath: indexPath, stores: [a.path])
        try onlyA.service.start()
        #expect(await onlyA.waitUntilCaughtUp())
        try await onlyA.service.deleteIndex()
        #expect(!onlyA.service.isRunning)
        let index = try SearchIndex(path: indexPath, mode: .readOnly)
        #expect(try Self.names(index) == Set((0..<10).map { "beta\($0)" }))
        #expect(try index.checkpoints().count == 1)

        try await both.service.deleteIndex()
        #expect(!FileManager.default.fileExists(atPath: indexPath))
        try both.service.start()
        #expect(await both.waitUntilCaughtUp(stores: 4))
        await both.stop()
        #expect(both.updates.suffix(2).allSatisfy { $0.exported && $0.inserted == 10 })
    }
}

/// Labels an app keeps for its objects outside the store.
final class Labels: Sendable {
    private let labels = Mutex<[Int64: String]>([:])
    subscript(primaryKey: Int64) -> String? {
        get { labels.withLock { $0[primaryKey] } }
        set { labels.withLock { $0[primaryKey] = newValue } }
    }
}

/// Adds the label the app keeps for an object, if any, to its item's keywords.
struct Tagger: ItemProducer {
    let labels: Labels

    func item(for object: ManagedObjectSnapshot, proposed: IndexedItem) -> IndexedItem? {
        var item = proposed
        if let label = labels[object.objectID.primaryKey] { item.keywords.append(label) }
        return item
    }
}
