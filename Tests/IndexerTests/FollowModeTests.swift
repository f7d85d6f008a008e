import CoreDataStore
import CoreDataStoreWriter
import Foundation
import GRDB
@testable import Indexer
import SearchIndex
import Synchronization
import Testing
import TestScratch

@Suite("Follow mode: file notifications and debouncing", .ownThread)
struct FollowModeTests {
    let directory: URL = {
        let url = Scratch.folder.appendingPathComponent("follow-mode-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    func places(at path: String, count: Int = 20) throws -> (StoreWriter, [ManagedObjectID]) {
        let writer = try StoreWriter.create(at: path, model: try ExpressionTests.model())
        var save = SaveRequest()
        for index in 0..<count { save.insert("Place", attributes: ["name": .string("town\(index)")]) }
        return (writer, try writer.save(save).insertedObjectIDs)
    }

    /// A service following the store at `path` into the index beside it, caught up.
    func startService(store path: String, timing: IndexingService.Timing = IndexingService.Timing()) async throws -> ServiceRecorder {
        let recorder = ServiceRecorder(indexPath: path + ".searchindex", stores: [path], timing: timing)
        try recorder.service.start()
        #expect(await recorder.waitUntilCaughtUp())
        return recorder
    }

    @Test("the store's -wal wakes the monitor; other files in its folder do not")
    func monitor() throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path)
        let monitor = try #require(StoreChangeMonitor(storePath: path))
        _ = monitor.wait(timeout: 0.05) // drain whatever creating the store left
        try Data("noise".utf8).write(to: directory.appendingPathComponent("Atlas.sqlite.searchindex"))
        try Data("noise".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        #expect(!monitor.wait(timeout: 0.2))
        var save = SaveRequest()
        save.update(.saved(ids[0]), attributes: ["name": .string("renamed")])
        try writer.save(save)
        let started = Date()
        #expect(monitor.wait(timeout: 5))
        #expect(Date().timeIntervalSince(started) < 1)
    }

    @Test("a store reached through a symbolic link is watched where its -wal is written, not polled")
    func monitorThroughLink() throws {
        let real = directory.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let path = real.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path)
        let link = directory.appendingPathComponent("Linked.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let monitor = try #require(StoreChangeMonitor(storePath: link))
        _ = monitor.wait(timeout: 0.05)
        var save = SaveRequest()
        save.update(.saved(ids[0]), attributes: ["name": .string("renamed")])
        try writer.save(save)
        #expect(monitor.wait(timeout: 5))
    }

    @Test("with notifications a save is indexed long before the safety-net poll would look")
    func notified() async throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path)
        var timing = IndexingService.Timing()
        timing.notifiedPollInterval = 30 // only a notification can wake it in time
        let recorder = try await startService(store: path, timing: timing)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readOnly)
        var latencies: [Double] = []
        for round in 0..<5 {
            var save = SaveRequest()
            save.update(.saved(ids[round]), attributes: ["name": .string("zephyr\(round)")])
            try writer.save(save)
            let saved = Date()
            while try await index.count(SearchRequest(query: "zephyr\(round)")) == 0 {
                guard Date().timeIntervalSince(saved) < 20, recorder.stops.isEmpty else { break }
                try await Task.sleep(nanoseconds: 2_000_000)
            }
            latencies.append(Date().timeIntervalSince(saved))
        }
        // A stop wakes the waiting thread: no save is needed, and no poll interval passes.
        let stopping = Date()
        await recorder.stop()
        #expect(Date().timeIntervalSince(stopping) < 5)
        #expect(recorder.stops.count == 1 && recorder.stops[0] == nil)
        // Far below the 30 s poll: only a notification can have woken it. A third of the poll, not a latency
        // figure (13 ms p50 on an idle machine: README, follow; the benchmark measures it): in the full suite on
        // two cores a first save once took 2.7 s, and a bound of 2 s failed there.
        #expect(latencies.allSatisfy { $0 < 10 }, "save → findable: \(latencies)")
    }

    @Test("a save between the last catch-up and the service's start is not lost")
    func saveBeforeFollowing() async throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path)
        let exporter = try Exporter.open(Exporter.Source(storePath: path, indexPath: path + ".searchindex"))
        _ = try await exporter.catchUp()
        exporter.close()
        var save = SaveRequest()
        save.update(.saved(ids[0]), attributes: ["name": .string("inbetween")])
        try writer.save(save)
        // No save follows: only the service's own start can notice this one.
        var timing = IndexingService.Timing()
        timing.notifiedPollInterval = 30
        let recorder = try await startService(store: path, timing: timing)
        await recorder.stop()
        let index = try SearchIndex(path: path + ".searchindex", mode: .readOnly)
        #expect(try await index.count(SearchRequest(query: "inbetween")) == 1)
    }

    @Test("a migration in place is noticed and the store opened again; a replaced handle says so")
    func storeChanged() async throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path)
        let recorder = try await startService(store: path)
        // What a lightweight migration does to a table, made by another connection.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "ALTER TABLE ZPLACE ADD COLUMN ZREGION VARCHAR") }
        try queue.close()
        #expect(await recorder.wait { events in
            events.contains { if case .storeChanged(path, .migrated) = $0 { true } else { false } }
        })
        // The store opened again is followed on.
        var save = SaveRequest()
        save.update(.saved(ids[1]), attributes: ["name": .string("aftermigration")])
        try writer.save(save)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readOnly)
        #expect(await recorder.wait { _ in (try? index.count(SearchRequest(query: "aftermigration"))) == 1 })
        await recorder.stop()
        #expect(recorder.stops.count == 1 && recorder.stops[0] == nil)

        let replaced = directory.appendingPathComponent("other.sqlite").path
        _ = try places(at: replaced)
        let fresh = try PersistentStore(path: path)
        #expect(try fresh.staleness() == nil)
        // A table created and dropped (GRDB does it when it opens a store in WAL mode) moves SQLite's schema
        // cookie but changes nothing.
        let again = try DatabaseQueue(path: path)
        try await again.write { db in try db.execute(sql: "CREATE TABLE passing (id INTEGER PRIMARY KEY); DROP TABLE passing") }
        try again.close()
        #expect(try fresh.staleness() == nil)
        #expect(rename(replaced, path) == 0)
        #expect(try fresh.staleness() == .replaced)
    }

    @Test("a store replaced by a file still being copied is opened once it is a store; one that never becomes one stops the service")
    func replacedWhileCopying() async throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        _ = try places(at: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        var timing = IndexingService.Timing()
        timing.reopenPatience = 10
        let recorder = try await startService(store: path, timing: timing)
        // A new index gets the store's permissions: it mirrors private data.
        let mode = try FileManager.default.attributesOfItem(atPath: path + ".searchindex")[.posixPermissions] as? Int
        #expect(mode == 0o640)
        let oldUUID = try #require(recorder.updates.first?.store.uuid)
        // Half a file first, then the whole store renamed over it, as a copy tool or a restore does.
        let partial = directory.appendingPathComponent("partial").path
        try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: partial))
        #expect(rename(partial, path) == 0)
        try await Task.sleep(nanoseconds: 600_000_000)
        let replacement = directory.appendingPathComponent("replacement.sqlite").path
        _ = try places(at: replacement, count: 5)
        #expect(rename(replacement, path) == 0)
        #expect(await recorder.wait { _ in recorder.updates.contains { $0.rebuildReason == .storeReplaced(previousUUID: oldUUID) } })
        // The store now at the path is another one: its first catch-up is reported as such (a command line
        // prints its lines from there).
        #expect(recorder.events.contains { if case .caughtUp(let summary) = $0 { summary.store.uuid != oldUUID } else { false } })
        #expect(recorder.service.isRunning)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readOnly)
        #expect(await recorder.wait { _ in (try? index.dump().count) == 5 })
        await recorder.stop()

        // Garbage that stays garbage: after its patience the service stops, saying why.
        timing.reopenPatience = 0.3
        let second = try await startService(store: path, timing: timing)
        try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: partial))
        let garbageAt = Date()
        #expect(rename(partial, path) == 0)
        #expect(await second.wait { _ in !second.stops.isEmpty })
        // It waited out its patience first.
        #expect(Date().timeIntervalSince(garbageAt) >= 0.3)
        guard case .store(.notADatabase)?? = second.stops.first else {
            Issue.record("expected the service to stop on a file that is not a store: \(second.stops)")
            return
        }
        #expect(!second.service.isRunning)
        #expect(second.runningAtStops == [false], "a subscriber that hears the stop finds the service stopped")

        // A stop request ends the wait for a store to become readable, without an error.
        _ = try places(at: replacement, count: 5)
        #expect(rename(replacement, path) == 0)
        timing.reopenPatience = 60
        let third = try await startService(store: path, timing: timing)
        try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: partial))
        #expect(rename(partial, path) == 0)
        #expect(await third.wait { events in events.contains { if case .storeChanged = $0 { true } else { false } } })
        let stopping = Date()
        await third.stop()
        #expect(Date().timeIntervalSince(stopping) < 5 && third.stops.count == 1 && third.stops[0] == nil, "\(third.stops)")
    }

    @Test("a burst of saves is debounced into few catch-ups and indexed exactly")
    func debounced() async throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path, count: 60)
        var timing = IndexingService.Timing()
        timing.quietPeriod = 0.05
        timing.maxDelay = 0.5
        let recorder = try await startService(store: path, timing: timing)
        let before = recorder.updates.count
        for (round, id) in ids.enumerated() {
            var save = SaveRequest()
            if round % 3 == 0 { save.delete(id) } else { save.update(.saved(id), attributes: ["name": .string("burst\(round)")]) }
            try writer.save(save)
        }
        let index = try SearchIndex(path: path + ".searchindex", mode: .readOnly)
        let newest = try PersistentStore(path: path).historyBounds().newest
        #expect(await recorder.wait { _ in (try? index.checkpoints().first?.token) == newest })
        await recorder.stop()
        #expect(recorder.stops.count == 1 && recorder.stops[0] == nil)
        let summaries = recorder.updates.dropFirst(before)
        #expect(summaries.reduce(0) { $0 + $1.updated } == 40 && summaries.reduce(0) { $0 + $1.deleted } == 20)
        #expect(summaries.count < ids.count / 4, "\(summaries.count) catch-ups for \(ids.count) saves")
        #expect(summaries.last?.token == newest)
        let names = Set(try await index.dump().filter { $0.entity == "Place" }.map(\.displayName))
        #expect(names == Set(ids.indices.filter { $0 % 3 != 0 }.map { "burst\($0)" }))
    }
}
