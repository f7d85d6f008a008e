import CoreDataStore
import Foundation
import GRDB
@testable import Indexer
import SearchIndex
import Synchronization
import Testing

/// What a follower thread has seen, shared with the test's thread.
final class FollowerLog: Sendable {
    private let state = Mutex<(summaries: [Exporter.Summary], stop: Bool, failure: String?, done: Bool)>(([], false, nil, false))
    var summaries: [Exporter.Summary] { state.withLock { $0.summaries } }
    var stopRequested: Bool { state.withLock { $0.stop } }
    var done: Bool { state.withLock { $0.done } }
    var failure: String? { state.withLock { $0.failure } }
    func record(_ summary: Exporter.Summary) { state.withLock { $0.summaries.append(summary) } }
    func requestStop() { state.withLock { $0.stop = true } }
    func finish(_ failure: String?) { state.withLock { $0.failure = failure; $0.done = true } }
}

@Suite("Follow mode: file notifications and debouncing")
struct FollowModeTests {
    let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("follow-mode-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    func places(at path: String, count: Int = 20) throws -> (StoreWriter, [ManagedObjectID]) {
        let writer = try StoreWriter.create(at: path, model: try ExpressionTests.model())
        var save = SaveRequest()
        for index in 0..<count { save.insert("Place", attributes: ["name": .string("town\(index)")]) }
        return (writer, try writer.save(save).insertedObjectIDs)
    }

    /// Runs `follow` on its own thread (blocking SQLite work stays off the cooperative pool).
    func startFollower(store path: String, timing: Exporter.FollowTiming) throws -> FollowerLog {
        let log = FollowerLog()
        let ready = DispatchSemaphore(value: 0)
        Thread {
            do {
                let store = try PersistentStore(path: path)
                let index = try SearchIndex(path: path + ".searchindex", mode: .readWrite(permissions: nil))
                let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(nil, model: store.model))
                _ = try exporter.catchUp()
                ready.signal()
                try exporter.follow(timing: timing, shouldStop: { log.stopRequested }, report: { log.record($0) })
                log.finish(nil)
            } catch {
                log.finish("\(error)")
                ready.signal()
            }
        }.start()
        ready.wait()
        return log
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
    func notified() throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path)
        var timing = Exporter.FollowTiming()
        timing.notifiedPollInterval = 30 // only a notification can wake it in time
        let log = try startFollower(store: path, timing: timing)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readOnly)
        var latencies: [Double] = []
        for round in 0..<5 {
            var save = SaveRequest()
            save.update(.saved(ids[round]), attributes: ["name": .string("zephyr\(round)")])
            try writer.save(save)
            let saved = Date()
            while try index.count(SearchRequest(query: "zephyr\(round)")) == 0 {
                guard Date().timeIntervalSince(saved) < 10, log.failure == nil else { break }
                usleep(2_000)
            }
            latencies.append(Date().timeIntervalSince(saved))
        }
        log.requestStop()
        var wake = SaveRequest() // the follower looks at its stop request when woken
        wake.insert("Place", attributes: ["name": .string("last")])
        try writer.save(wake)
        let deadline = Date().addingTimeInterval(10)
        while !log.done && Date() < deadline { usleep(10_000) }
        #expect(log.done && log.failure == nil)
        #expect(latencies.allSatisfy { $0 < 2 }, "save → findable: \(latencies)")
    }

    @Test("a save between the last catch-up and follow's start is not lost")
    func saveBeforeFollowing() throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path)
        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readWrite(permissions: nil))
        let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(nil, model: store.model))
        _ = try exporter.catchUp()
        var save = SaveRequest()
        save.update(.saved(ids[0]), attributes: ["name": .string("inbetween")])
        try writer.save(save)
        // No save follows: only follow's own start can notice this one.
        let deadline = Date().addingTimeInterval(0.6)
        try exporter.follow(shouldStop: { Date() > deadline }, report: { _ in })
        #expect(try index.count(SearchRequest(query: "inbetween")) == 1)
    }

    @Test("a migration in place or a replaced file ends follow with storeChanged, so the caller opens the store again")
    func storeChanged() throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        _ = try places(at: path)
        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: path + ".searchindex", mode: .readWrite(permissions: nil))
        let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(nil, model: store.model))
        var altered = false
        let deadline = Date().addingTimeInterval(10)
        let end = try exporter.follow(shouldStop: {
            if !altered {
                // What a lightweight migration does to a table, made by another connection.
                altered = true
                let queue = try? DatabaseQueue(path: path)
                try? queue?.write { db in try db.execute(sql: "ALTER TABLE ZPLACE ADD COLUMN ZREGION VARCHAR") }
                try? queue?.close()
            }
            return Date() > deadline
        }, report: { _ in })
        #expect(end == .storeChanged(reason: "changed its tables (a migration)"))

        let replaced = directory.appendingPathComponent("other.sqlite").path
        _ = try places(at: replaced)
        let fresh = try PersistentStore(path: path)
        #expect(try fresh.staleness() == nil)
        // A table created and dropped (GRDB does it when it opens a store in WAL mode) moves SQLite's schema
        // cookie but changes nothing.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE passing (id INTEGER PRIMARY KEY); DROP TABLE passing") }
        try queue.close()
        #expect(try fresh.staleness() == nil)
        #expect(rename(replaced, path) == 0)
        #expect(try fresh.staleness() == "was replaced by another file")
        exporter.close()
    }

    @Test("Exporter.open gives the index the store's permissions; reopen waits for a store to appear, then gives up")
    func openAndReopen() throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        _ = try places(at: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        let source = Exporter.Source(storePath: path, indexPath: path + ".searchindex", requiresHistory: true)
        let exporter = try Exporter.open(source)
        #expect(try exporter.catchUp().inserted == 20)
        let mode = try FileManager.default.attributesOfItem(atPath: source.indexPath)[.posixPermissions] as? Int
        #expect(mode == 0o640)
        exporter.close()
        // Gone for good: after its patience, reopen reports the missing store.
        var moved = source
        moved.storePath = directory.appendingPathComponent("Gone.sqlite").path
        let started = Date()
        #expect(throws: ExportError.self) { try Exporter.reopen(moved, patience: 0.3, shouldStop: { false }) }
        #expect(Date().timeIntervalSince(started) >= 0.3)
        // A stop request ends the wait without an error.
        #expect(try Exporter.reopen(moved, patience: 5, shouldStop: { true }) == nil)
        // Back in place: the next reopen takes the lock the closed exporter gave up.
        #expect(try Exporter.reopen(source, shouldStop: { false }) != nil)
    }

    @Test("a burst of saves is debounced into few catch-ups and indexed exactly")
    func debounced() throws {
        let path = directory.appendingPathComponent("Atlas.sqlite").path
        let (writer, ids) = try places(at: path, count: 60)
        var timing = Exporter.FollowTiming()
        timing.quietPeriod = 0.05
        timing.maxDelay = 0.5
        let log = try startFollower(store: path, timing: timing)
        for (round, id) in ids.enumerated() {
            var save = SaveRequest()
            if round % 3 == 0 { save.delete(id) } else { save.update(.saved(id), attributes: ["name": .string("burst\(round)")]) }
            try writer.save(save)
        }
        let index = try SearchIndex(path: path + ".searchindex", mode: .readOnly)
        let newest = try PersistentStore(path: path).historyBounds().newest
        let deadline = Date().addingTimeInterval(20)
        while try index.checkpoints().first?.token != newest && Date() < deadline { usleep(10_000) }
        log.requestStop()
        var wake = SaveRequest()
        wake.insert("Country", attributes: ["name": .string("wake")])
        try writer.save(wake)
        while !log.done && Date() < deadline { usleep(10_000) }
        #expect(log.failure == nil)
        let summaries = log.summaries
        #expect(summaries.reduce(0) { $0 + $1.updated } == 40 && summaries.reduce(0) { $0 + $1.deleted } == 20)
        #expect(summaries.count < ids.count / 4, "\(summaries.count) catch-ups for \(ids.count) saves")
        let names = Set(try index.dump().filter { $0.entity == "Place" }.map(\.displayName))
        #expect(names == Set(ids.indices.filter { $0 % 3 != 0 }.map { "burst\($0)" }))
    }
}
