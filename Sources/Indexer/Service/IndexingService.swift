import CoreDataStore
import Foundation
import SearchIndex
import Synchronization

/// Keeps an index current with one or more Core Data stores, in the background of an app or a daemon:
/// Searchlight's `NSCoreDataCoreSpotlightDelegate`.
///
/// ``start(rebuild:)`` opens the index and every store, then a task of the service's own, on a thread of its
/// own, catches each store up (a first export, then its history) and follows its saves until ``stop()``. Every batch commits with
/// its store's history token, so a service stopped, killed or crashed starts again exactly where the
/// index says it is. A store replaced or migrated under the service is opened again and rebuilt; a store
/// or index that stays locked by another process stalls indexing, which retries. What happens is told
/// as ``IndexingEvent``s on ``events``.
///
/// One process writes an index at a time (a lock file beside it says which); one service writes several
/// stores into one index.
///
/// ```swift
/// let service = IndexingService(indexPath: "Library.searchindex", stores: [.init(path: "Library.sqlite")])
/// let events = service.events
/// try service.start()
/// for await event in events {
///     if case .indexDidUpdate(let update) = event { print(update.store.uuid, update.token) }
/// }
/// ```
public final class IndexingService: Sendable {
    /// A store the service follows.
    public struct Store: Sendable {
        /// The app's store (`.sqlite`), opened read-only.
        public var path: String
        /// A model file to read it with instead of its `Z_MODELCACHE`.
        public var modelPath: String?
        /// What to index. nil: the configuration the index was built with for this store, else the
        /// zero-config defaults.
        public var configuration: IndexConfiguration?
        /// The functions `FUNCTION(x, 'name:')` may call in the configuration's expressions.
        public var functions: FunctionRegistry
        /// Per entity name, code that reshapes or skips the item the configuration builds.
        public var producers: [String: any ItemProducer]

        /// Describes a store to follow.
        public init(path: String, modelPath: String? = nil, configuration: IndexConfiguration? = nil,
                    functions: FunctionRegistry = .standard, producers: [String: any ItemProducer] = [:]) {
            self.path = path
            self.modelPath = modelPath
            self.configuration = configuration
            self.functions = functions
            self.producers = producers
        }
    }

    /// How the service notices saves and paces its work.
    public struct Timing: Sendable {
        /// How often `PRAGMA data_version` is polled when file notifications are unavailable.
        public var pollInterval: TimeInterval = 0.05
        /// With notifications, a safety-net poll (a missed notification, a network file system).
        public var notifiedPollInterval: TimeInterval = 0.25
        /// At most how long the index's upkeep runs (`IndexWriter.maintain(budget:)`) each time the
        /// stores have been quiet for a poll interval: a save arriving meanwhile waits for it.
        public var maintenanceBudget: TimeInterval = 0.05
        /// A burst of saves is caught up once it has been quiet this long…
        public var quietPeriod: TimeInterval = 0.01
        /// …or once this long has passed since its first commit, whichever comes first (a steady stream
        /// of saves is still indexed every `maxDelay`).
        public var maxDelay: TimeInterval = 0.015
        /// Whether to use file-change notifications on the stores' files (`-wal`, `-journal`, database).
        public var useNotifications = true
        /// How long a replaced store may take to become a readable store again (a file being copied into place).
        public var reopenPatience: TimeInterval = 10
        /// How long a write waits for a lock another process holds on the index before the service reports
        /// ``IndexingEvent/stalled(path:since:)`` and retries.
        public var busyTimeout: TimeInterval = 10
        /// How long to wait before retrying after the store or the index was busy.
        public var busyRetryInterval: TimeInterval = 0.5

        /// The defaults.
        public init() {}
    }

    /// How the service writes.
    public struct Options: Sendable {
        /// Objects per index transaction.
        public var batchSize = 1_000
        /// When a catch-up with a long backlog gives way to a rebuild beside the index.
        public var rebuildPolicy = RebuildPolicy()
        /// Whether a related object's dependents beyond a page are re-indexed beside later history
        /// (``Exporter/defersDependents``).
        public var defersDependents = true
        /// How long a followed store's catch-up walks deferred dependents before the service turns to its
        /// other stores and requests (``Exporter/walkSlice``); the walks go on at the store's next turn.
        public var walkSlice: TimeInterval = 1
        public var timing = Timing()

        /// The defaults.
        public init() {}
    }

    /// Opens the index backend a run writes into, when it is not an index file (a PostgreSQL database).
    public typealias WriterOpener = @Sendable () throws(SearchIndexError) -> any IndexWriter

    /// The index file, or where the backend's index is (a URL without its password).
    public let indexPath: String
    /// Opens another backend for each run; nil for the index file at ``indexPath``.
    let openWriter: WriterOpener?
    /// The stores followed into it.
    public let stores: [Store]
    public let options: Options
    let broadcaster = EventBroadcaster()
    let state = Mutex<RunState>(RunState())

    /// What runs now: the loop's control while a run is under way.
    struct RunState {
        var control: RunControl?
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// A stop requested while no run was under way yet (a signal before the run began): the next run
        /// begins stopped, and so ends after its first batch at most.
        var stopBeforeBegin = false
    }

    /// A service writing `stores` into the index at `indexPath`; nothing is opened before ``start(rebuild:)``.
    public init(indexPath: String, stores: [Store], options: Options = Options()) {
        self.indexPath = indexPath
        self.openWriter = nil
        self.stores = stores
        self.options = options
    }

    /// A service writing `stores` into another index backend, which `open` opens for each run and which
    /// enforces one writer per store itself (a PostgreSQL database, written by many services at once).
    ///
    /// - Parameters:
    ///   - location: Where the index is, as events and messages name it (never a password).
    ///   - open: Opens the backend for writing.
    ///   - stores: The stores to follow into it.
    ///   - options: How the service writes.
    public init(location: String, opening open: @escaping WriterOpener, stores: [Store], options: Options = Options()) {
        self.indexPath = location
        self.openWriter = open
        self.stores = stores
        self.options = options
    }

    /// What happens from now on, in order: each access is a new stream with every event sent after it.
    /// Subscribe before ``start(rebuild:)`` to hear the first catch-ups. Read it, or drop it: events wait in it
    /// until read.
    public var events: AsyncStream<IndexingEvent> { broadcaster.subscribe() }

    /// Whether the service is following its stores (from ``start(rebuild:)`` until it stopped).
    public var isRunning: Bool { state.withLock { $0.control != nil } }

    /// Opens the index and every store and starts following them in the service's task.
    ///
    /// Problems found while opening (a missing store, a store without persistent history, a configuration
    /// that does not fit the model, another process writing the index) are thrown here; later ones end the
    /// run with ``IndexingEvent/stopped(error:)``. Calling it while the service follows its stores does
    /// nothing; while a ``catchUp(rebuild:)`` runs, it throws ``ExportError/alreadyRunning``. A run that is
    /// ending (asked to stop, or past its last requests) is waited for, then a new one starts.
    ///
    /// - Parameter rebuild: Write every store's items again from scratch before following.
    public func start(rebuild: Bool = false) throws(ExportError) {
        if let current = state.withLock({ $0.control }), !current.isEnding {
            guard current.follows else { throw .alreadyRunning }
            return
        }
        let control = try begin(follows: true)
        let follower: Follower
        do {
            follower = try Follower.open(indexPath: indexPath, openWriter: openWriter, stores: stores, options: options, requiresHistory: true, rebuild: rebuild,
                                         send: broadcaster.send)
        } catch {
            // Announced: what opening told subscribers (notes about the stores) ends with why it failed.
            end(control, error: error, announce: true)
            throw error
        }
        let handOff = Mutex<Follower?>(follower)
        _ = Self.runTask(named: "searchlight indexing", control: control) { [self] () throws(ExportError) in
            // Taken out of the box so the follower (its stores, their private copies) goes when the run
            // ends, not when the task lets go of this closure.
            let error = await handOff.withLock { $0.take() }?.run(control)
            self.end(control, error: error, announce: true)
        }
    }

    /// Makes a new run the current one, after the one before it ended (blocking: for synchronous callers).
    func begin(follows: Bool) throws(ExportError) -> RunControl {
        while true {
            let (control, previous) = tryBegin(follows: follows)
            if let control { return control }
            // A run between its last batch (or its last requests) and its end: wait for it. A live one is another
            // caller's.
            guard let previous, previous.isEnding else { throw .alreadyRunning }
            previous.waitUntilFinished()
        }
    }

    /// Makes a new run the current one, waiting without blocking a thread for the one before it to end.
    func begin(follows: Bool) async throws(ExportError) -> RunControl {
        while true {
            let (control, previous) = tryBegin(follows: follows)
            if let control { return control }
            guard let previous, previous.isEnding else { throw .alreadyRunning }
            await waitUntilStopped()
        }
    }

    /// A new current run, or the run under way.
    private func tryBegin(follows: Bool) -> (RunControl?, RunControl?) {
        state.withLock { state in
            if let current = state.control { return (nil, current) }
            let control = RunControl(follows: follows)
            if state.stopBeforeBegin {
                state.stopBeforeBegin = false
                control.requestStop()
            }
            state.control = control
            return (control, nil)
        }
    }

    /// Ends a run: waiters of ``stop()`` go on, and subscribers hear ``IndexingEvent/stopped(error:)``
    /// when `announce` is set (a following run's end).
    func end(_ control: RunControl, error: ExportError?, announce: Bool) {
        // Requests no one served (a run that never followed, or failed to open) hear why.
        for case .reindex(_, let continuation) in control.close() {
            continuation.resume(throwing: error ?? ExportError.stopped)
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.control === control { state.control = nil }
            // Sent under the lock that ends the run: a subscriber that hears it finds `isRunning` false, and
            // a run waiting on this one cannot begin (and send its own events) before it is sent. The
            // broadcaster only enqueues, and never takes this lock.
            if announce { broadcaster.send(.stopped(error: error)) }
            defer { state.waiters = [] }
            return state.waiters
        }
        control.markFinished()
        for waiter in waiters { waiter.resume() }
    }

    /// Stops following after the batch in hand and returns once the run has ended (the index then holds
    /// whole batches and their tokens). Does nothing when the service is not running.
    public func stop() async {
        guard let control = state.withLock({ $0.control }) else { return }
        control.requestStop()
        await withCheckedContinuation { continuation in
            let finished = state.withLock { state -> Bool in
                guard state.control === control else { return true }
                state.waiters.append(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
    }

    /// Asks the run under way to stop after the batch in hand, without waiting (a signal handler's way);
    /// when none is under way yet, the next run to begin stops at once.
    public func requestStop() {
        state.withLock { state -> RunControl? in
            if state.control == nil { state.stopBeforeBegin = true }
            return state.control
        }?.requestStop()
    }

    /// Waits until the current run ends, by a stop or an error; returns at once when none runs.
    public func waitUntilStopped() async {
        await withCheckedContinuation { continuation in
            let running = state.withLock { state -> Bool in
                guard state.control != nil else { return false }
                state.waiters.append(continuation)
                return true
            }
            if !running { continuation.resume() }
        }
    }
}
