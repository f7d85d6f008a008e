import CoreDataStore
import Foundation
import Synchronization
import Indexer

/// Tells the person at the terminal what `index` does: a summary line per catch-up on stdout, rebuilds,
/// stalls and notes on stderr, and a first export's progress.
final class IndexReporter: Sendable {
    private let indexPath: String
    private let quiet: Bool
    /// Called once when a summary line cannot be written (a full disk, `> /dev/full`): the run should stop.
    private let onOutputFailure: @Sendable () -> Void
    /// Mutable state, touched only by the one task reading the events (and `--print-config` before it).
    private let state: Mutex<State>

    private struct State {
        var display: ProgressDisplay?
        /// The errno of the first summary line that could not be written.
        var outputError: Int32?
    }

    init(indexPath: String, quiet: Bool, showsProgress: Bool, onOutputFailure: @escaping @Sendable () -> Void = {}) {
        self.indexPath = indexPath
        self.quiet = quiet
        self.onOutputFailure = onOutputFailure
        state = Mutex(State(display: showsProgress ? ProgressDisplay() : nil))
    }

    /// The errno of the first summary line that could not be written, if one could not.
    var outputError: Int32? { state.withLock { $0.outputError } }

    func show(_ event: IndexingEvent) {
        state.withLock { state in
            // Any line but progress starts on a clean line: the bar goes first.
            if case .progress = event {} else { state.display?.finish() }
            switch event {
            case .progress(_, let progress):
                state.display?.show(progress)
            case .caughtUp(let summary):
                // A first catch-up that changed the index was told by its .indexDidUpdate, just before.
                if !summary.changedIndex { line(summary, &state) }
                if summary.stopped {
                    printNote("stopped by a signal after a whole batch (the index is consistent)"
                        + (summary.unfinished.map { "; \($0.sentence)" } ?? "")
                        + "; run the same command to " + (summary.unfinished == nil ? "continue" : "resume it where it stopped"))
                }
            case .indexDidUpdate(let summary):
                line(summary, &state)
            case .rebuildStarted(let store, let reason):
                printNote("rebuilding \(store.path): \(Self.describe(reason))")
            case .previousStoreRemoved(let store, let previous, let items):
                printNote("store \(store.path) was replaced (UUID \(previous) → \(store.uuid)): removed \(items) items of the old store")
            case .storeChanged(let path, let change):
                printNote("\(path) \(change): opening it again")
            case .stalled(let path, _):
                printNote("\(path) is locked by another process (an app's long write, or another indexer): indexing waits "
                    + "and goes on when it is free; SIGINT stops it after the batch in hand")
            case .resumed(let path):
                printNote("\(path): indexing again")
            case .notice(let notice):
                printNote(Self.describe(notice))
            case .stopped:
                break
            }
        }
    }

    /// `indexed Places.sqlite: 12 inserted, 0 updated, 0 deleted; token 40; 0.03 s → Places.searchindex`, and a
    /// note on values left out. One line per catch-up, visible at once even when stdout is a file or a pipe.
    private func line(_ summary: Exporter.Summary, _ state: inout State) {
        guard !quiet, state.outputError == nil else { return }
        print("indexed \(summary.store.path): \(summary.inserted) inserted, \(summary.updated) updated, \(summary.deleted) deleted; "
            + "token \(summary.token); " + String(format: "%.2f s", summary.seconds) + " → \(indexPath)")
        if summary.omittedValues > 0 { printNote(IndexingNotice.valuesOmitted(count: summary.omittedValues).description) }
        // fflush(nil) flushes every stream without touching the C `stdout` global. A failed write is kept
        // (the stream's error is cleared by the failed flush, so a later check would not see it).
        if fflush(nil) != 0 {
            state.outputError = errno
            onOutputFailure()
        }
    }

    /// A rebuild's reason, in the command's words.
    static func describe(_ reason: RebuildReason) -> String {
        switch reason {
        case .requested: "--rebuild was given"
        default: reason.description
        }
    }

    /// A notice, with the flag that changes what it reports, naming its store (several may be indexed).
    static func describe(_ notice: IndexingNotice) -> String {
        switch notice {
        case .store(let path, .modelInferred):
            named(path) + "the store has no Z_MODELCACHE and no --model was given: the model is inferred from the tables "
                + "(property names are lower-cased column names)"
        case .store(let path, let note): named(path) + note.description
        case .storedConfigurationUsed(let path): named(path) + "using the configuration the index was built with (pass --config to change it)"
        default: notice.description
        }
    }

    /// `Places.sqlite: `, or nothing when the store's path is not known.
    private static func named(_ path: String) -> String { path.isEmpty ? "" : path + ": " }
}
