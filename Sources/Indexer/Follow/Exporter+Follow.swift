import CoreDataStore
import Foundation
import SearchIndex

extension Exporter {
    /// How follow mode notices commits and groups them.
    public struct FollowTiming: Sendable {
        /// How often `PRAGMA data_version` is polled when file notifications are unavailable.
        public var pollInterval: TimeInterval = 0.05
        /// With notifications, a safety-net poll (a missed notification, a network file system); it also
        /// bounds how long a stop request waits.
        public var notifiedPollInterval: TimeInterval = 0.25
        /// A burst of saves is caught up once it has been quiet this long…
        public var quietPeriod: TimeInterval = 0.01
        /// …or once this long has passed since its first commit, whichever comes first (a steady stream
        /// of saves is still indexed every `maxDelay`).
        public var maxDelay: TimeInterval = 0.1
        /// Whether to use file-change notifications on the store's files (`-wal`, `-journal`, database).
        public var useNotifications = true

        public init() {}
    }

    /// Why ``follow(timing:shouldStop:report:log:)`` returned.
    public enum FollowEnd: Sendable, Equatable {
        /// A stop was requested (the index holds whole batches).
        case stopped
        /// The store file was replaced or migrated under the follower: open it again (a new exporter) and
        /// follow on; the next catch-up detects the new UUID or model and rebuilds.
        case storeChanged(reason: String)
    }

    /// Keeps the index current until `shouldStop` says so.
    ///
    /// It sleeps until the store's files change (inotify/kqueue, see ``StoreChangeMonitor``) or a poll
    /// interval passes, then checks `PRAGMA data_version`, which changes exactly when another connection
    /// commits. A burst of commits is debounced into one catch-up. A stop request is honored between
    /// batches, so the index always holds a whole batch and its token.
    @discardableResult
    public func follow(timing: FollowTiming = FollowTiming(), shouldStop: () -> Bool,
                       report: (Summary) -> Void, log: (String) -> Void = { _ in }) throws(ExportError) -> FollowEnd {
        guard store.hasHistory else { throw .historyNotTracked(path: store.path) }
        let monitor = timing.useNotifications ? StoreChangeMonitor(storePath: store.path) : nil
        if timing.useNotifications && monitor == nil {
            log("file-change notifications are unavailable here: polling every \(Int(timing.pollInterval * 1000)) ms")
        }
        var version: Int64
        do { version = try store.dataVersion() } catch { throw .store(error) }
        // Catch up once *after* reading the version: a save committed between the caller's last catch-up and
        // that read would otherwise count as seen and stay unindexed until the next save.
        try catchUp(report: report, log: log, shouldStop: shouldStop)
        while !shouldStop() {
            if let monitor {
                // Debounce before looking: the WAL is written a moment before the commit becomes visible
                // in the shared-memory index, and a burst of saves becomes one catch-up.
                if monitor.wait(timeout: timing.notifiedPollInterval) { Self.debounce(monitor, timing: timing) }
            } else {
                usleep(UInt32(timing.pollInterval * 1_000_000))
            }
            // Writing on into an index someone deleted or replaced would be writing into the void.
            if let gone = index.staleness() { throw .index(gone) }
            // This handle reads the file it opened: a store replaced or migrated needs a new one.
            do {
                if let reason = try store.staleness() { return .storeChanged(reason: reason) }
            } catch {
                throw .store(error)
            }
            let current: Int64
            do { current = try store.dataVersion() } catch { throw .store(error) }
            guard current != version else { continue }
            // A commit after this read changes it again and is caught by the next round.
            version = current
            try catchUp(report: report, log: log, shouldStop: shouldStop)
        }
        return .stopped
    }

    /// Catches up and reports what changed, if anything did.
    private func catchUp(report: (Summary) -> Void, log: (String) -> Void, shouldStop: () -> Bool) throws(ExportError) {
        let summary = try catchUp(log: log, shouldStop: shouldStop)
        if summary.inserted + summary.updated + summary.deleted > 0 || summary.rebuildReason != nil { report(summary) }
    }

    /// Waits while notifications keep arriving less than `quietPeriod` apart, at most `maxDelay`.
    static func debounce(_ monitor: StoreChangeMonitor, timing: FollowTiming) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timing.maxDelay * 1e9)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return }
            let left = Double(deadline - now) / 1e9
            guard monitor.wait(timeout: min(timing.quietPeriod, left)) else { return }
        }
    }
}
