import ArgumentParser
import CoreDataStore
import Foundation
import Indexer
import PostgresIndex
import SearchIndex

/// `searchctl index`: brings the index up to date with one or more stores, once or following them.
struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Index Core Data stores: a first export, then their history, exactly once.",
        discussion: """
            Stores are opened read-only. The index defaults to $SEARCHCTL_INDEX, else to the store's path with \
            .searchindex, created with the store file's permissions; several stores (--store given again) share \
            the --index given. An index on PostgreSQL (postgres://...) takes many exporters at once, one per store. \
            Rebuilds (store replaced, history purged, model or configuration changed) are announced on stderr.

            With --follow it keeps the index current until SIGINT or SIGTERM, finishing the batch in hand.

            Examples:
              searchctl index --store Places.sqlite --config places.json
              searchctl index --store Places.sqlite --follow
              searchctl index --store A.sqlite --store B.sqlite \\
                --index All.searchindex --follow
              searchctl index --store Places.sqlite \\
                --index postgres://searchlight@db.example:5432/search
            """)

    @Option(help: ArgumentHelp("An app's Core Data store (.sqlite); give it again for more stores.", valueName: "path"))
    var store: [String]

    @Option(help: ArgumentHelp("The index file, or postgres://USER@HOST:PORT/DATABASE (default: $SEARCHCTL_INDEX, else beside the store).",
                               valueName: "path"))
    var index: String?

    /// `--index`, else `$SEARCHCTL_INDEX`: an option names the store here, never the index, so the
    /// environment's index is the default before the store's own.
    var namedIndex: String? { index ?? IndexLocation.environmentIndex }

    @Option(help: ArgumentHelp("A model file to read the stores with instead of their Z_MODELCACHE.", valueName: "path"))
    var model: String?

    @Option(help: ArgumentHelp("A JSON configuration of what to index (see --print-config).", valueName: "path"))
    var config: String?

    @Flag(help: "Export everything again.")
    var rebuild = false

    @Flag(help: "Keep following the stores' history until SIGINT or SIGTERM (needs history tracking).")
    var follow = false

    @Option(help: "Objects per index transaction.")
    var batchSize = 1_000

    @Flag(help: "Re-index every item a history batch reaches in that batch's transaction, a big rename's too (by default items beyond a page that show a changed related object follow a page at a time, so later saves do not wait for them).")
    var wholeBatches = false

    @Flag(help: "Print the effective configuration (defaults filled in) as JSON and exit.")
    var printConfig = false

    @Flag(help: "Show progress on a long first export (the default on a terminal).")
    var progress = false

    @Flag(help: "No summary line and no progress.")
    var quiet = false

    func validate() throws {
        guard !store.isEmpty else { throw ValidationError("missing --store PATH: the app's Core Data store to index") }
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        guard !(progress && quiet) else { throw ValidationError("--progress and --quiet contradict each other: give one") }
        // The same spelling twice (other names of one file are the service's to find).
        if let twice = store.first(where: { path in store.filter { $0 == path }.count > 1 }) {
            throw ValidationError("\(twice) is given to --store twice: give each store once")
        }
        guard store.count == 1 || namedIndex != nil else {
            throw ValidationError("\(store.count) stores share one index: say which with --index PATH (or SEARCHCTL_INDEX)")
        }
        guard store.count == 1 || !printConfig else { throw ValidationError("--print-config shows one store's configuration: give one --store") }
    }

    func run() async throws {
        do {
            var configuration: IndexConfiguration?
            if let config {
                guard FileManager.default.fileExists(atPath: config) else { throw CoreDataStoreError.fileNotFound(path: config) }
                do { configuration = try IndexConfiguration(contentsOf: config) } catch { throw ExportError.configuration(error.description) }
            }
            let indexPath = namedIndex ?? IndexLocation.defaultIndex(forStore: store[0])
            var options = IndexingService.Options()
            options.batchSize = batchSize
            options.defersDependents = !wholeBatches
            let stores = store.map { IndexingService.Store(path: $0, modelPath: model, configuration: configuration) }
            let service: IndexingService
            if PostgresLocation.isPostgres(indexPath) {
                // Many exporters write one database: each claims its stores there, not with a lock file.
                let location = try PostgresLocation(indexPath)
                guard PostgresBackend.isBuilt else { throw PostgresIndexError.notBuilt }
                service = IndexingService(location: location.description, opening: { () throws(SearchIndexError) in
                    do throws(PostgresIndexError) { return try PostgresBackend.openWriter(location) } catch { throw error.indexError }
                }, stores: stores, options: options)
            } else {
                service = IndexingService(indexPath: indexPath, stores: stores, options: options)
            }
            // A summary line that cannot be written stops the run: following on would index for nobody.
            let reporter = IndexReporter(indexPath: service.indexPath, quiet: quiet,
                                         showsProgress: progress || (!quiet && Terminal.isTerminal(STDERR_FILENO)),
                                         onOutputFailure: { service.requestStop() })
            if printConfig {
                let source = Exporter.Source(storePath: store[0], modelPath: model, configuration: configuration, indexPath: indexPath)
                print(try Exporter.configuration(for: source, events: reporter.show).effective.json)
                return
            }
            let events = service.events
            // SIGINT/SIGTERM finish the batch in hand, from the first page of a first export on.
            let signals = StopRequest.onTerminationSignals { service.requestStop() }
            defer { withExtendedLifetime(signals) {} }
            // Events (notes, progress, summary lines) are printed as they come, until the run ends; its end
            // carries its error, after whatever it reported before failing.
            let printer = Task {
                for await event in events {
                    if case .stopped(let error) = event { return error }
                    reporter.show(event)
                }
                return nil
            }
            do {
                if follow {
                    try service.start(rebuild: rebuild)
                } else {
                    _ = try await service.catchUp(rebuild: rebuild)
                }
            } catch {
                // The run's end is on its way, after its notes: let them print, then fail.
                _ = await printer.value
                throw error
            }
            if let error = await printer.value { throw error }
            if let code = reporter.outputError { exitOutputFailed(errno: code) }
        } catch {
            throw fail(error)
        }
    }
}
