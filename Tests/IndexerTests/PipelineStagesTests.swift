import CoreDataStore
import CoreDataStoreWriter
import Foundation
import SearchIndex
import Synchronization
import Testing
import TestScratch
@testable import Indexer

/// The exporter's stages as tasks: blocking work on threads of their own, the producer awaited, cancellation
/// between batches.
@Suite("Pipeline stages", .ownThread)
struct PipelineStagesTests {
    /// The name of the stage whose thread runs the caller, "" off any stage's thread.
    static func threadName() -> String { ThreadExecutor.currentName ?? "" }

    @Test("stages blocked on SQLite-like waits leave Swift's cooperative pool free, and their threads end with them")
    func blockedStagesLeavePoolFree() async throws {
        // More blocked stages than the pool has threads (one per core): if they blocked the pool, the plain
        // task below could never run.
        let stages = ProcessInfo.processInfo.activeProcessorCount + 4
        let release = DispatchSemaphore(value: 0), blocked = DispatchSemaphore(value: 0)
        // Each stage begins on its own thread (a detached task that had to start on the pool could wait
        // behind other tests' synchronous work there).
        let tasks = (0..<stages).map { number in
            ThreadExecutor.detachedTask(named: "stage \(number)") { () async -> Bool in
                Self.block(on: release, signalling: blocked)
            }
        }
        // Stages on the pool would never all block at once (it has a thread per core): this would time out.
        var allBlocked = true
        for _ in 0..<stages where allBlocked { allBlocked = await Self.wait(for: blocked) }
        // Every stage is blocked now; the pool still runs work.
        let answer = allBlocked ? await Task.detached { 6 * 7 }.value : nil
        // Released before any expectation is checked: a failed one must not leave the stages blocked.
        for _ in 0..<stages { release.signal() }
        #expect(allBlocked && answer == 42)
        for task in tasks { #expect(await task.value) }
    }

    /// Blocks the calling thread (a stage's) until `release` is signalled, signalling `blocked` first;
    /// whether it ran on a stage's thread.
    static func block(on release: DispatchSemaphore, signalling blocked: DispatchSemaphore) -> Bool {
        let onStage = threadName().hasPrefix("stage ")
        blocked.signal()
        release.wait()
        return onStage
    }

    @Test("a stage's thread ends once its work is done, letting go of its executor")
    func threadsEnd() async throws {
        let executors = await withTaskGroup(of: ThreadExecutorReference.self) { group in
            for number in 0..<4 {
                group.addTask {
                    await ThreadExecutor.withExecutor(named: "stage \(number)") { executor in
                        await withTaskExecutorPreference(executor) { #expect(Self.threadName() == "stage \(number)") }
                        return ThreadExecutorReference(executor)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Each thread let go of its executor when it ended.
        let deadline = ContinuousClock.now + .seconds(5)
        while executors.contains(where: { $0.executor != nil }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(executors.count == 4 && executors.allSatisfy { $0.executor == nil })
    }

    @Test("a commit stage that fails cancels its producer and awaits it: nothing the producer holds outlives the stage")
    func producerJoined() async throws {
        struct CommitFailed: Error {}
        let pages = PageQueue<Int>(capacity: 2)
        let producerReturned = Mutex(false)
        await #expect(throws: CommitFailed.self) {
            try await Exporter.withProducer(named: "test pages", pages, {
                // An endless producer: only the queue's cancellation ends it.
                var page = 0
                while pages.put(page) { page += 1 }
                #expect(Self.threadName() == "test pages")
                producerReturned.withLock { $0 = true }
            }) { () throws -> Void in
                #expect(try pages.next() == 0)
                throw CommitFailed()
            }
        }
        // Checked at once, without waiting: the stage returned only after its producer did.
        #expect(producerReturned.withLock { $0 })
    }

    @Test("a catch-up commits on its own thread, builds pages on another, and a cancelled task stops between batches and resumes")
    func catchUpStagesAndCancellation() async throws {
        let (folder, path, writer) = try TestFolder.atlasStore("stages")
        var save = SaveRequest()
        for index in 0..<3_000 { save.insert("Place", attributes: ["name": .string("town\(index)")]) }
        _ = try writer.save(save)
        let indexPath = folder.appendingPathComponent("atlas.searchindex").path
        let producerThreads = Mutex<Set<String>>([])
        let producer = ClosureItemProducer { _, proposed in
            producerThreads.withLock { _ = $0.insert(Self.threadName()) }
            return proposed
        }
        @Sendable func exporter() throws(ExportError) -> Exporter {
            do {
                let store = try PersistentStore(path: path)
                let index = try SearchIndex(path: indexPath, mode: .readWrite(permissions: nil))
                let json = Data(#"{"entities": {"Place": {"displayName": "name"}}}"#.utf8)
                let configuration = try ResolvedConfiguration(try IndexConfiguration(json: json), model: store.model)
                return try Exporter(store: store, index: index, configuration: configuration, producers: ["Place": producer], batchSize: 100)
            } catch {
                throw ExportError(error)
            }
        }

        // Cancelled from outside while its first transaction commits: the catch-up waits in its events
        // handler (on its own thread) until the cancellation has been sent.
        let started = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0)
        let eventThreads = Mutex<Set<String>>([])
        // On a thread of its own from the start: other tests' synchronous work may keep the pool busy.
        let task = ThreadExecutor.detachedTask(named: "test catch-up") { () async -> Result<Exporter.Summary, ExportError> in
            do throws(ExportError) {
                let first = try exporter()
                defer { first.close() }
                var signalled = false
                return .success(try await first.catchUp(events: { event in
                    eventThreads.withLock { _ = $0.insert(Self.threadName()) }
                    if case .progress(_, let report) = event, report.itemsWritten > 0, !signalled {
                        signalled = true
                        started.signal()
                        cancelled.wait()
                    }
                }))
            } catch {
                return .failure(error)
            }
        }
        let didStart = await Self.wait(for: started)
        task.cancel()
        cancelled.signal()
        try #require(didStart)
        let stopped = try await task.value.get()
        #expect(stopped.stopped && stopped.unfinished != nil)
        #expect(stopped.inserted > 0 && stopped.inserted < 3_000, "\(stopped)")
        #expect(eventThreads.withLock { $0 } == ["searchlight commit"])
        #expect(producerThreads.withLock { $0 } == ["searchlight export pages"])

        // The next catch-up resumes where the cancelled one stopped: every object once.
        let second = try exporter()
        let resumed = try await second.catchUp()
        second.close()
        #expect(!resumed.stopped && resumed.rebuildReason == nil)
        #expect(stopped.inserted + resumed.inserted == 3_000)
        #expect(try await SearchIndex(path: indexPath, mode: .readOnly).dump().count == 3_000)

        // Cancelled before it begins: with nothing new in history it is caught up, not stopped; with a save
        // to replay it stops before the batch, which the next catch-up writes.
        @Sendable func cancelledCatchUp() async throws -> Exporter.Summary {
            try await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                let exporter = try exporter()
                defer { exporter.close() }
                return try await exporter.catchUp()
            }.value
        }
        let idle = try await cancelledCatchUp()
        #expect(!idle.stopped && idle.inserted + idle.updated + idle.deleted == 0, "\(idle)")
        var insert = SaveRequest()
        insert.insert("Place", attributes: ["name": .string("latecomer")])
        let token = try #require(try writer.save(insert).transactionNumber)
        let behind = try await cancelledCatchUp()
        #expect(behind.stopped && behind.inserted == 0 && behind.token == token - 1, "\(behind)")
        let after = try exporter()
        let caughtUp = try await after.catchUp()
        after.close()
        #expect(!caughtUp.stopped && caughtUp.inserted == 1 && caughtUp.token == token)
    }

    /// Waits, without blocking the pool, until `semaphore` is signalled; false if it was not after a minute
    /// (a bound against hanging, not a timing: other tests may keep the pool busy meanwhile).
    static func wait(for semaphore: DispatchSemaphore) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while semaphore.wait(timeout: .now()) == .timedOut {
            guard ContinuousClock.now < deadline else { return semaphore.wait(timeout: .now()) == .success }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }
}

/// A weak reference to an executor: nil once its thread ended and let go of it.
struct ThreadExecutorReference: Sendable {
    weak var executor: ThreadExecutor?
    init(_ executor: ThreadExecutor) { self.executor = executor }
}
