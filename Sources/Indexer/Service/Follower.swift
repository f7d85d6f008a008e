import CoreDataStore
import Foundation
import SearchIndex

/// One run of an ``IndexingService``: the index, its writer lock and an exporter per store, driven by the
/// run's task on a thread of its own (never shared between tasks).
///
/// It catches every store up, then sleeps until a store's files change (``StoreChangeMonitor``) or a poll
/// interval passes, and catches up each store whose `PRAGMA data_version` moved. A store replaced or
/// migrated is opened again; a store or index that stays busy is retried.
final class Follower {
    struct Entry {
        var source: Exporter.Source
        var exporter: Exporter
        /// The store's data version read before its last catch-up.
        var version: Int64?
        /// Whether the store needs a catch-up.
        var pending = true
        /// Whether the run has reported its first catch-up.
        var reported = false
        /// Whether the next catch-up rebuilds.
        var rebuild = false
        /// Since when the store or the index has made its catch-ups fail with busy.
        var stalledSince: Date?
    }

    let index: any IndexWriter
    /// The index file's writer lock; nil for a backend that enforces one writer per store itself.
    private let lock: WriterLock?
    private var entries: [Entry]
    private let options: IndexingService.Options
    private let send: @Sendable (IndexingEvent) -> Void

    private init(index: any IndexWriter, lock: WriterLock?, entries: [Entry], options: IndexingService.Options, send: @escaping @Sendable (IndexingEvent) -> Void) {
        self.index = index
        self.lock = lock
        self.entries = entries
        self.options = options
        self.send = send
    }

    deinit {
        lock?.release()
        // A backend's claims go with the run, at once: the next run (or another machine) may claim the stores.
        index.release()
    }

    /// Takes the index's writer lock, opens the index and every store; or, given `openWriter`, opens the
    /// backend it returns, which claims each store for this process.
    static func open(indexPath: String, openWriter: IndexingService.WriterOpener?, stores: [IndexingService.Store], options: IndexingService.Options,
                     requiresHistory: Bool, rebuild: Bool = false, send: @escaping @Sendable (IndexingEvent) -> Void) throws(ExportError) -> Follower {
        guard let first = stores.first else { throw .configuration("no store to index was given") }
        for store in stores { try Exporter.checkIndexIsNotStore(indexPath: indexPath, storePath: store.path) }
        let lock: WriterLock?
        let index: any IndexWriter
        if let openWriter {
            do { index = try openWriter() } catch { throw .index(error) }
            // An index file opened this way is still written by one process at a time.
            lock = try (index as? SearchIndex).map { opened throws(ExportError) in try WriterLock(indexPath: opened.path) }
        } else {
            lock = try WriterLock(indexPath: indexPath)
            index = try Exporter.openIndex(indexPath, mirroring: first.path, busyTimeout: options.timing.busyTimeout)
        }
        do throws(ExportError) {
            let entries = try openExporters(stores, index: index, indexPath: indexPath, options: options, requiresHistory: requiresHistory,
                                            rebuild: rebuild, send: send)
            return Follower(index: index, lock: lock, entries: entries, options: options, send: send)
        } catch {
            // The stores claimed before the one that failed are given up now, not when the connection closes.
            index.release()
            lock?.release()
            throw error
        }
    }

    /// An exporter per store into `index`, each store claimed there.
    private static func openExporters(_ stores: [IndexingService.Store], index: any IndexWriter, indexPath: String, options: IndexingService.Options,
                                      requiresHistory: Bool, rebuild: Bool, send: @escaping @Sendable (IndexingEvent) -> Void) throws(ExportError) -> [Entry] {
        var entries: [Entry] = []
        for store in stores {
            let source = Exporter.Source(storePath: store.path, modelPath: store.modelPath, configuration: store.configuration, indexPath: indexPath,
                                         batchSize: options.batchSize, requiresHistory: requiresHistory, functions: store.functions,
                                         producers: store.producers)
            let exporter = try Exporter.open(source, index: index, lock: nil, events: send)
            exporter.rebuildPolicy = options.rebuildPolicy
            exporter.defersDependents = options.defersDependents
            // One store given twice (two names of one file, or a copy) would take turns rebuilding over the other.
            if let twin = entries.first(where: { $0.exporter.store.metadata.storeUUID.caseInsensitiveCompare(exporter.store.metadata.storeUUID) == .orderedSame }) {
                let sameFile = FileIdentity(path: store.path).map { $0 == FileIdentity(path: twin.source.storePath) } ?? false
                throw .storeGivenTwice(path: store.path, other: twin.source.storePath, sameFile: sameFile)
            }
            entries.append(Entry(source: source, exporter: exporter, rebuild: rebuild))
        }
        return entries
    }

    /// Catches every store up once; a stop request ends it between batches.
    func catchUpAll(_ control: RunControl) async throws(ExportError) -> [Exporter.Summary] {
        var summaries: [Exporter.Summary] = []
        for position in entries.indices {
            guard !control.isStopRequested, !Task.isCancelled else { break }
            summaries.append(try await catchUp(position))
        }
        return summaries
    }

    /// Follows the stores until a stop request (nil) or an error the run cannot get past.
    func run(_ control: RunControl) async -> ExportError? {
        let timing = options.timing
        let monitor = timing.useNotifications ? StoreChangeMonitor(storePaths: entries.map(\.source.storePath)) : nil
        if timing.useNotifications && monitor == nil { send(.notice(.polling(interval: timing.pollInterval))) }
        control.attach(monitor)
        let error = await follow(control, monitor: monitor)
        await serve(control.close())
        return error
    }

    /// The run's loop: catch up, serve requests, wait for a change.
    private func follow(_ control: RunControl, monitor: StoreChangeMonitor?) async -> ExportError? {
        let timing = options.timing
        // Following, a catch-up takes turns with the others (a one-shot catch-up walks to the end).
        for position in entries.indices { entries[position].exporter.walkSlice = options.walkSlice }
        while !control.isStopRequested {
            for position in entries.indices where entries[position].pending && !control.isStopRequested {
                do {
                    _ = try await catchUp(position)
                } catch {
                    guard let file = Self.busyFile(error) else { return error }
                    stall(position, on: file)
                }
            }
            guard !control.isStopRequested else { break }
            // Requests wait for the catch-ups in hand: a reindex builds on a store that is caught up.
            await serve(control.takeRequests())
            let stalled = entries.contains { $0.stalledSince != nil }
            if entries.contains(where: { $0.pending && $0.stalledSince == nil }) {
                // A catch-up gave its turn up with walks left: the next round, at once.
            } else if let monitor {
                // Debounce before looking: the WAL is written a moment before the commit becomes visible in
                // the shared-memory index, and a burst of saves becomes one catch-up.
                if monitor.wait(timeout: stalled ? timing.busyRetryInterval : timing.notifiedPollInterval) {
                    if !control.isStopRequested { Self.debounce(monitor, timing: timing) }
                } else if !stalled && !control.isStopRequested {
                    maintainWhileIdle(timing)
                }
            } else {
                usleep(UInt32(min(stalled ? timing.busyRetryInterval : timing.pollInterval, 10) * 1_000_000))
                if !stalled && !control.isStopRequested { maintainWhileIdle(timing) }
            }
            // Writing on into an index someone deleted or replaced would be writing into the void.
            if let gone = index.staleness() { return .index(gone) }
            for position in entries.indices where !entries[position].pending {
                do {
                    try look(at: position, control)
                } catch {
                    guard let file = Self.busyFile(error) else { return error }
                    stall(position, on: file)
                }
            }
        }
        return nil
    }

    /// The index's upkeep (stale term leaders listed again) while no store changed for a poll interval.
    /// It only makes searches faster: when the index is busy or fails here, the next catch-up says so.
    private func maintainWhileIdle(_ timing: IndexingService.Timing) {
        _ = try? index.maintain(budget: timing.maintenanceBudget)
    }

    /// Marks a store's catch-up pending when its store was committed to, or opens it again when it was replaced.
    private func look(at position: Int, _ control: RunControl) throws(ExportError) {
        let store = entries[position].exporter.store
        let change: PersistentStore.Change?
        do { change = try store.staleness() } catch { throw .store(error) }
        if let change {
            // This handle reads the file it opened: a store replaced or migrated needs a new one.
            send(.storeChanged(path: entries[position].source.storePath, change: change))
            guard let reopened = try reopen(entries[position].source, control) else { return }
            reopened.rebuildPolicy = options.rebuildPolicy
            reopened.defersDependents = options.defersDependents
            reopened.walkSlice = options.walkSlice
            entries[position].exporter = reopened
            entries[position].pending = true
            // Another store now: its first catch-up is reported as one.
            entries[position].reported = false
            return
        }
        let current: Int64
        do { current = try store.dataVersion() } catch { throw .store(error) }
        // A commit after this read changes it again and is caught by the next round.
        if current != entries[position].version { entries[position].pending = true }
    }

    /// Catches one store up and tells what changed.
    @discardableResult
    private func catchUp(_ position: Int) async throws(ExportError) -> Exporter.Summary {
        let exporter = entries[position].exporter
        // Read *before* catching up: a save committed during the catch-up moves it again.
        let version: Int64
        do { version = try exporter.store.dataVersion() } catch { throw .store(error) }
        // A stop request cancels this task: the catch-up stops between batches.
        let summary = try await exporter.catchUp(rebuild: entries[position].rebuild, events: send)
        entries[position].rebuild = false
        entries[position].version = version
        // Walks left after the catch-up's slice: its next turn comes without waiting for a save.
        entries[position].pending = summary.walksLeft
        if entries[position].stalledSince != nil {
            entries[position].stalledSince = nil
            send(.resumed(path: entries[position].source.storePath))
        }
        if summary.changedIndex { send(.indexDidUpdate(summary)) }
        if !entries[position].reported {
            entries[position].reported = true
            send(.caughtUp(summary))
        }
        return summary
    }

    /// Marks a store's catch-up stalled on `file` (the store or the index another process keeps locked).
    private func stall(_ position: Int, on file: String) {
        guard entries[position].stalledSince == nil else { return }
        let since = Date()
        entries[position].stalledSince = since
        entries[position].pending = true
        send(.stalled(path: file, since: since))
    }

    /// The file a busy error names (the store or the index), nil for any other error.
    private static func busyFile(_ error: ExportError) -> String? {
        switch error {
        case .store(.busy(let path)), .index(.busy(let path)): path
        default: nil
        }
    }

    /// Opens `source` again, giving a file still being copied into place up to the timing's patience to
    /// become a readable store; nil when a stop was requested meanwhile.
    private func reopen(_ source: Exporter.Source, _ control: RunControl) throws(ExportError) -> Exporter? {
        let deadline = Date().addingTimeInterval(options.timing.reopenPatience)
        while true {
            do {
                return try Exporter.open(source, index: index, lock: nil, events: send)
            } catch .store where Date() < deadline {
                if control.isStopRequested { return nil }
                usleep(200_000)
            }
        }
    }

    /// Serves requests: each caller hears its answer.
    func serve(_ requests: [RunControl.Request]) async {
        for request in requests {
            switch request {
            case .reindex(let ids, let continuation):
                do { continuation.resume(returning: try await reindex(ids)) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    /// Builds the items of `ids` again, by store (a store not exported yet is caught up instead; cancelling the
    /// task stops it between batches).
    func reindex(_ ids: [ManagedObjectID]) async throws(ExportError) -> [Exporter.Summary] {
        var byStore: [Int: [ManagedObjectID]] = [:]
        for id in ids {
            guard let position = entries.firstIndex(where: {
                $0.exporter.store.metadata.storeUUID.caseInsensitiveCompare(id.storeUUID) == .orderedSame
            }) else { throw .unknownStore(uuid: id.storeUUID) }
            byStore[position, default: []].append(id)
        }
        var summaries: [Exporter.Summary] = []
        for (position, ids) in byStore.sorted(by: { $0.key < $1.key }) {
            let summary = try await entries[position].exporter.reindex(ids, events: send)
            if summary.changedIndex { send(.indexDidUpdate(summary)) }
            summaries.append(summary)
        }
        return summaries
    }

    /// Waits while notifications keep arriving less than `quietPeriod` apart, at most `maxDelay`.
    static func debounce(_ monitor: StoreChangeMonitor, timing: IndexingService.Timing) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timing.maxDelay * 1e9)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return }
            let left = Double(deadline - now) / 1e9
            guard monitor.wait(timeout: min(timing.quietPeriod, left)) else { return }
        }
    }
}
