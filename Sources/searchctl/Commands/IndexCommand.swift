import ArgumentParser
import CoreDataStore
import Foundation
import Indexer

/// `searchctl index`: brings the index up to date with the store.
struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Index a Core Data store: a first export, then its history, exactly once.",
        discussion: """
            The store is opened read-only. The index defaults to the store's path with .searchindex, created with \
            the store file's permissions. Rebuilds (store replaced, history purged, model or configuration \
            changed) are announced on stderr.

            With --follow it keeps the index current until SIGINT or SIGTERM, finishing the batch in hand.

            Examples:
              searchctl index --store Places.sqlite --config places.json
              searchctl index --store Places.sqlite --follow
            """)

    @Option(help: ArgumentHelp("The app's Core Data store (.sqlite).", valueName: "path"))
    var store: String

    @Option(help: ArgumentHelp("The index file (default: beside the store).", valueName: "path"))
    var index: String?

    @Option(help: ArgumentHelp("A model file to read the store with instead of its Z_MODELCACHE.", valueName: "path"))
    var model: String?

    @Option(help: ArgumentHelp("A JSON configuration of what to index (see --print-config).", valueName: "path"))
    var config: String?

    @Flag(help: "Export everything again.")
    var rebuild = false

    @Flag(help: "Keep following the store's history until SIGINT or SIGTERM (needs history tracking).")
    var follow = false

    @Option(help: "Objects per index transaction.")
    var batchSize = 1_000

    @Flag(help: "Print the effective configuration (defaults filled in) as JSON and exit.")
    var printConfig = false

    @Flag(help: "Show progress on a long first export (the default on a terminal).")
    var progress = false

    @Flag(help: "No summary line and no progress.")
    var quiet = false

    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        guard !(progress && quiet) else { throw ValidationError("--progress and --quiet contradict each other: give one") }
    }

    func run() throws {
        do {
            var configuration: IndexConfiguration?
            if let config {
                guard FileManager.default.fileExists(atPath: config) else { throw CoreDataStoreError.fileNotFound(path: config) }
                do { configuration = try IndexConfiguration(contentsOf: config) } catch { throw ExportError.configuration(error.description) }
            }
            let indexPath = index ?? IndexLocation.defaultIndex(forStore: store)
            if printConfig {
                let source = Exporter.Source(storePath: store, modelPath: model, configuration: configuration, indexPath: indexPath)
                print(try Exporter.configuration(for: source, note: printNote).effective.json)
                return
            }
            let source = Exporter.Source(storePath: store, modelPath: model, configuration: configuration, indexPath: indexPath,
                                         batchSize: batchSize, requiresHistory: follow)
            var next: Exporter? = try Exporter.open(source, note: printNote)
            let display = progress || (!quiet && Terminal.isTerminal(STDERR_FILENO)) ? ProgressDisplay() : nil
            // SIGINT/SIGTERM finish the batch in hand, from the first page of a first export on.
            let stop = StopRequest.onTerminationSignals()
            let line = { (summary: Exporter.Summary) in
                guard !quiet else { return }
                print("indexed \(store): \(summary.inserted) inserted, \(summary.updated) updated, \(summary.deleted) deleted; token \(summary.token); "
                    + String(format: "%.2f s", summary.seconds) + " → \(indexPath)")
                if summary.omittedValues > 0 {
                    printNote("\(summary.omittedValues) value\(summary.omittedValues == 1 ? " was" : "s were") not finite numbers (NaN or infinite) and left out of their items; the items were indexed without them")
                }
                // One line per catch-up, visible at once even when stdout is a file or a pipe
                // (fflush(nil) flushes every stream without touching the C `stdout` global).
                fflush(nil)
            }
            var rebuild = self.rebuild
            while let exporter = next.take() {
                let summary = try exporter.catchUp(rebuild: rebuild, log: { display?.finish(); printNote($0) },
                                                   progress: display.map { display in { display.show($0) } }, shouldStop: { stop.isRequested })
                rebuild = false
                display?.finish()
                line(summary)
                if summary.stopped {
                    printNote("stopped by a signal after a whole batch (the index is consistent)"
                        + (summary.unfinished.map { "; \($0.sentence)" } ?? "")
                        + "; run the same command to " + (summary.unfinished == nil ? "continue" : "resume it where it stopped"))
                    return
                }
                guard follow else { return }
                guard case .storeChanged(let reason) = try exporter.follow(shouldStop: { stop.isRequested }, report: line, log: { printNote($0) }) else {
                    return
                }
                printNote("\(store) \(reason): opening it again")
                exporter.close() // the new exporter takes the index's writer lock
                next = try Exporter.reopen(source, shouldStop: { stop.isRequested }, note: printNote)
            }
        } catch {
            throw fail(error)
        }
    }
}
