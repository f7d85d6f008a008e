import CoreDataStore
import Dispatch
import Synchronization

/// What a running service and its run's task share: the stop request (which cancels the task), requests to
/// serve between batches, and the way to wake the task's thread from its wait.
final class RunControl: Sendable {
    /// Work the run does between batches, for a caller waiting on the continuation.
    enum Request: Sendable {
        case reindex([ManagedObjectID], CheckedContinuation<[Exporter.Summary], any Error>)
    }

    private struct State {
        var stopRequested = false
        /// Set once the run took the last requests: later ones are served without it.
        var closed = false
        var requests: [Request] = []
        var monitor: StoreChangeMonitor?
        /// Cancels the run's task: its catch-up stops between batches.
        var cancel: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the run follows its stores (``IndexingService/start(rebuild:)``) or catches up once.
    let follows: Bool

    init(follows: Bool) { self.follows = follows }

    var isStopRequested: Bool { state.withLock { $0.stopRequested } }

    /// Whether the run takes no more work: asked to stop, or past its last requests (between those and its end).
    var isEnding: Bool { state.withLock { $0.stopRequested || $0.closed } }

    /// Asks the run to stop after the batch in hand: cancels its task and wakes its thread if it waits.
    func requestStop() {
        let (monitor, cancel) = state.withLock { state in
            state.stopRequested = true
            return (state.monitor, state.cancel)
        }
        cancel?()
        monitor?.wake()
    }

    /// Gives the control the way to cancel the run's task (at once, if a stop was already requested).
    func attach(cancelling cancel: @escaping @Sendable () -> Void) {
        let stopped = state.withLock { state in
            state.cancel = cancel
            return state.stopRequested
        }
        if stopped { cancel() }
    }

    /// Queues a request for the run and wakes it; false once the run no longer takes requests.
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

    /// The monitor the run waits on, for ``requestStop()`` and ``submit(_:)`` to wake.
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
