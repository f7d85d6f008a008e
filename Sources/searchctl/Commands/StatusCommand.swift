import ArgumentParser
import Foundation
import Indexer
import SearchIndex

/// `searchctl status`: how far the index is, per store.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the index: stores, tokens and lag, items per entity, size, schema, writer.",
        discussion: "Example:\n  searchctl status --store Places.sqlite")

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @OptionGroup var location: IndexLocation

    @Option(help: "text or json.")
    var format: Format = .text

    func run() throws {
        do {
            let index = try location.open()
            let status = try IndexStatus.read(index: index)
            let statistics = status.statistics
            switch format {
            case .json:
                print(JSONValue.object([
                    ("index", .string(index.location)),
                    ("schemaVersion", .int(Int64(statistics.schemaVersion))),
                    ("sizeBytes", .int(statistics.sizeInBytes)),
                    ("items", .object(statistics.itemsPerEntity.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
                    ("located", .int(Int64(statistics.locatedItems))),
                    ("writerPID", status.writerPID.map { .int(Int64($0)) } ?? .null),
                    ("stores", .array(status.stores.map { store in
                        .object([
                            ("path", .string(store.checkpoint.storePath)), ("uuid", .string(store.checkpoint.storeUUID)),
                            ("token", .int(store.checkpoint.token)), ("newestTransaction", store.newestTransaction.map(JSONValue.int) ?? .null),
                            // Until an export ends, the token says nothing about how complete the index is.
                            ("lag", store.lag.map(JSONValue.int) ?? .null),
                            // Related objects whose dependents are re-indexed a page at a time beside later saves.
                            ("deferredDependents", .int(Int64(store.deferredDependents))),
                            ("updatedAt", .string(store.checkpoint.updatedAt.iso8601)),
                            ("exportInProgress", .bool(store.export != nil)),
                            ("export", store.export.map { export in
                                .object([("kind", .string(export.kind.rawValue)),
                                         ("objectsExported", export.objectsExported.map { .int(Int64($0)) } ?? .null),
                                         ("objectCount", export.objectCount.map { .int(Int64($0)) } ?? .null)])
                            } ?? .null),
                            ("problem", .optional(store.problem)),
                            ("configuration", store.checkpoint.configuration.flatMap(JSONValue.init(parsing:)) ?? .null),
                        ])
                    })),
                ]).pretty)
            case .text:
                print("index: \(index.location) (schema \(statistics.schemaVersion), \(statistics.sizeInBytes / 1024) KiB)")
                if index is SearchIndex {
                    print("writer: " + (status.writerPID.map { "searchctl index running (pid \($0))" } ?? "none"))
                } else {
                    // Many exporters write a database at once, each holding its stores' locks there.
                    print("writers: one per store, each holding the store's lock in the database")
                }
                for store in status.stores {
                    print("store: \(store.checkpoint.storePath) (\(store.checkpoint.storeUUID))")
                    if let export = store.export {
                        print("  \(export.sentence); updated \(store.checkpoint.updatedAt.iso8601)")
                    } else {
                        let newest = store.newestTransaction.map { "newest \($0), lag \(store.lag ?? 0)" } ?? (store.problem ?? "no history")
                        print("  token \(store.checkpoint.token); \(newest); updated \(store.checkpoint.updatedAt.iso8601)")
                        if store.deferredDependents > 0 {
                            let walks = store.deferredDependents
                            print("  re-indexing the items that show \(walks) changed related object\(walks == 1 ? "" : "s") (a page at a time beside later saves)")
                        }
                    }
                    print("  configuration: " + (store.checkpoint.configuration != nil
                        ? "kept with the index (reused by searchctl index without --config; --format json prints it)"
                        : "not recorded (an index built before schema 2)"))
                }
                for (entity, count) in statistics.itemsPerEntity.sorted(by: { $0.key < $1.key }) { print("  \(entity): \(count) items") }
                print("  located: \(statistics.locatedItems)")
            }
        } catch {
            throw fail(error)
        }
    }
}
