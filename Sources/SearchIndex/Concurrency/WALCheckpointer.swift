import Foundation
import GRDBSQLite
import Synchronization

/// Checkpoints the index's write-ahead log on a thread and connection of its own, so that a commit does
/// not wait for one.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold (1,000 pages): it copies
/// the log's pages into the database file and syncs both, 10–40 ms that the committing batch waits for, and
/// a follower under a storm of saves crossed it several times a second (its batches write about 90 pages
/// each: FTS5's segments and the rows of every re-indexed item). Here the commit only asks, and a passive
/// checkpoint copies the same pages beside the next batch, blocking neither the writer nor a reader.
///
/// The log starts over at the first write after a checkpoint copied all of it. A writer that commits
/// again before that (an export, batch after batch) would let it grow without end, so a commit that finds
/// it over ``pagesBeforeWaiting`` waits for a checkpoint of everything, as every commit over the threshold
/// did before. Under back-to-back commits the log therefore reaches about that size, not the threshold's,
/// before it starts over; under a follower's spaced commits it mostly starts over at 1,000–2,000 pages.
final class WALCheckpointer: Sendable {
    /// The log's size at which a commit asks for a checkpoint: SQLite's default, kept, since a longer log
    /// makes every page a reader looks up in it slower.
    let pagesBeforeCheckpoint: Int32
    /// The log's size at which a commit waits for the checkpoint (16 MiB of 4 KiB pages by default).
    let pagesBeforeWaiting: Int32

    private struct State {
        /// Requests so far, and the request the last finished checkpoint covered: a checkpoint started after
        /// request n copies every page committed before it.
        var requested = 0
        var covered = 0
        var waiting = false
        var stopped = false
    }
    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let checkpointed = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Opens the checkpointing connection on `path`; nil when it cannot be opened, and the writer then
    /// keeps SQLite's own automatic checkpoint.
    init?(path: String, pagesBeforeCheckpoint: Int32 = 1_000, pagesBeforeWaiting: Int32 = 4_000) {
        self.pagesBeforeCheckpoint = pagesBeforeCheckpoint
        self.pagesBeforeWaiting = pagesBeforeWaiting
        var opened: OpaquePointer?
        guard sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, nil) == SQLITE_OK,
              let connection = opened else {
            sqlite3_close_v2(opened)
            return nil
        }
        // A connection checkpoints only once its pager has seen that the file is in WAL mode: one read tells it.
        guard sqlite3_exec(connection, "SELECT count(*) FROM sqlite_schema", nil, nil, nil) == SQLITE_OK else {
            sqlite3_close_v2(connection)
            return nil
        }
        // Used and closed by the thread alone. `OpaquePointer` is not Sendable: it travels as its address.
        let address = Int(bitPattern: UnsafeRawPointer(connection))
        // The thread holds this object until `stop()` ends it.
        let thread = Thread { [self] in
            let connection = OpaquePointer(bitPattern: address)
            while true {
                wakeUp.wait()
                let (request, stopped) = state.withLock { ($0.requested, $0.stopped) }
                if stopped {
                    // A commit still waiting is let go: it waits for no checkpoint after this.
                    let waiting = state.withLock { state in
                        state.covered = state.requested
                        defer { state.waiting = false }
                        return state.waiting
                    }
                    if waiting { checkpointed.signal() }
                    break
                }
                guard state.withLock({ request > $0.covered }) else { continue } // a wake-up a checkpoint already served
                // Busy (another process checkpointing) is not an error: the next commit asks again.
                _ = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                let waiting = state.withLock { state in
                    state.covered = request
                    defer { state.waiting = false }
                    return state.waiting
                }
                if waiting { checkpointed.signal() }
            }
            sqlite3_close_v2(connection)
            finished.signal()
        }
        thread.name = "searchlight wal checkpoint"
        thread.start()
    }

    /// Asks for a checkpoint of everything committed so far; with `waiting`, returns once it is done.
    func request(waiting: Bool) {
        let request = state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.requested += 1
            return state.requested
        }
        guard let request else { return }
        wakeUp.signal()
        guard waiting else { return }
        while state.withLock({ state in
            state.waiting = request > state.covered
            return state.waiting
        }) {
            checkpointed.wait()
        }
    }

    /// Ends the thread after the checkpoint it is running, and closes its connection.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        wakeUp.signal()
        finished.wait()
    }

    /// Replaces the automatic checkpoint of `writer` (the one connection that writes) with requests to this
    /// checkpointer. The hook holds this object unretained: ``detach(from:)`` must run before it goes.
    func attach(to writer: OpaquePointer) {
        sqlite3_wal_hook(writer, { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
            if pages >= checkpointer.pagesBeforeCheckpoint { checkpointer.request(waiting: pages >= checkpointer.pagesBeforeWaiting) }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gives `writer` its automatic checkpoint back.
    func detach(from writer: OpaquePointer) {
        sqlite3_wal_autocheckpoint(writer, pagesBeforeCheckpoint)
    }
}
