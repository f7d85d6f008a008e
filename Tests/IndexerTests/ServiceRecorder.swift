import Foundation
@testable import Indexer
import SearchIndex
import Synchronization

/// An ``IndexingService`` under test, with every event it sent since the recorder was made.
final class ServiceRecorder: Sendable {
    let service: IndexingService
    private final class Log: Sendable {
        let events = Mutex<[IndexingEvent]>([])
        /// `service.isRunning` as each stop was heard.
        let runningAtStops = Mutex<[Bool]>([])
    }

    private let log = Log()
    private let reader: Task<Void, Never>

    init(_ service: IndexingService) {
        self.service = service
        let stream = service.events
        let log = log
        // On a thread of its own: a recorder on the cooperative pool missed a follower's events while tests
        // that block held every thread of the pool.
        reader = ThreadExecutor.detachedTask(named: "service recorder") {
            for await event in stream {
                if case .stopped = event { log.runningAtStops.withLock { $0.append(service.isRunning) } }
                log.events.withLock { $0.append(event) }
            }
        }
    }

    /// Records the events of a service on `indexPath` following `stores`.
    convenience init(indexPath: String, stores: [String], timing: IndexingService.Timing = IndexingService.Timing()) {
        var options = IndexingService.Options()
        options.timing = timing
        self.init(IndexingService(indexPath: indexPath, stores: stores.map { IndexingService.Store(path: $0) }, options: options))
    }

    deinit { reader.cancel() }

    var events: [IndexingEvent] { log.events.withLock { $0 } }

    /// The summaries of the catch-ups that changed the index.
    var updates: [Exporter.Summary] {
        events.compactMap { if case .indexDidUpdate(let summary) = $0 { summary } else { nil } }
    }

    /// How the runs ended, in order.
    var stops: [ExportError?] {
        events.compactMap { if case .stopped(let error) = $0 { .some(error) } else { nil } }
    }

    /// Whether the service still said it was running when each stop was heard (it must not).
    var runningAtStops: [Bool] { log.runningAtStops.withLock { $0 } }

    /// Waits until `condition` holds for the events so far (true), or `timeout` seconds pass (false).
    func wait(timeout: TimeInterval = 20, until condition: ([IndexingEvent]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(events) { return true }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return condition(events)
    }

    /// Stops the service and waits until its end was recorded (the event reaches the recorder after
    /// `stop()` returns).
    func stop() async {
        let before = stops.count
        await service.stop()
        _ = await wait(timeout: 10) { _ in self.stops.count > before }
    }

    /// Waits until every store's first catch-up was reported.
    func waitUntilCaughtUp(stores: Int = 1, timeout: TimeInterval = 20) async -> Bool {
        await wait(timeout: timeout) { events in events.filter { if case .caughtUp = $0 { true } else { false } }.count >= stores }
    }
}
