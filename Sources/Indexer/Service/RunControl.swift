import CoreDataStore
import Dispatch
import Synchronization

/// What a running service and its thread share: the stop request, requests to serve between batches, and
/// the way to wake the thread from its wait.
final class RunControl: Sendable {
    /// Work the service's thread does between batches, for a caller waiting on the continuation.
    enum Request: Sendable {
        case reindex([ManagedObjectID], CheckedContinuation<[Exporter.Summary], any Error>)
    }

    private struct State {
        var stopRequested = false
        /// Set once the thread took the last requests: later ones are served without it.
        var closed = false
        var requests: [Request] = []
        var monitor: StoreChangeMonitor?
    }

    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the run follows its stores (``IndexingService/start(rebuild:)``) or catches up once.
    let follows: Bool

    init(follows: Bool) { self.follows = follows }

    var isStopRequested: Bool { state.withLock { $0.stopRequested } }

    /// Asks the thread to stop after the batch in hand, waking it if it waits.
    func requestStop() {
        state.withLock { state in
            state.stopRequested = true
            return state.monitor
        }?.wake()
    }

    /// Queues a request for the thread and wakes it; false once the thread no longer takes requests.
    func submit(_ request: Request) -> Bool {
        let monitor = state.withLock { state -> StoreChangeMonitor?? in
            guard !state.closed else { return nil }
            state.requests.append(request)
            return .some(state.monitor)
        }
        guard let monitor else { return false }
        monitor?.wake()
        return true
    }

    /// The requests queued since the last call.
    func takeRequests() -> [Request] {
        state.withLock { state in
            defer { state.requests = [] }
            return state.requests
        }
    }

    /// Takes the last requests and refuses any more.
    func close() -> [Request] {
        state.withLock { state in
            state.closed = true
            defer { state.requests = [] }
            return state.requests
        }
    }

    /// The monitor the thread waits on, for ``requestStop()`` and ``submit(_:)`` to wake.
    func attach(_ monitor: StoreChangeMonitor?) {
        state.withLock { $0.monitor = monitor }
    }

    func markFinished() { finished.signal() }

    /// Blocks until the run ended.
    func waitUntilFinished() {
        finished.wait()
        finished.signal() // for any other waiter
    }
}
