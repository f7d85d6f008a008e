import ArgumentParser
import Foundation
import Indexer
import SearchIndex

/// `searchctl saved`: the saved searches an index can run.
struct SavedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "saved",
        abstract: "List the saved searches: the configuration's \"searches\" and the model's fetch requests.",
        discussion: """
            Run one with search --saved NAME, giving each $VARIABLE a value with --var NAME=VALUE.

            Examples:
              searchctl saved --store Places.sqlite
              searchctl search --saved bigCities --var MIN=1000000 --store Places.sqlite
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json }

    @OptionGroup var location: IndexLocation

    @Option(help: "table or json.")
    var format: Format = .table

    func run() throws {
        do {
            let searches = try location.open().savedSearches().values.sorted { $0.name < $1.name }
            switch format {
            case .json:
                print(JSONValue.array(searches.map { search in
                    .object([
                        ("name", .string(search.name)), ("from", .string(search.origin.rawValue)),
                        ("variables", .array(search.variables.map(JSONValue.string))),
                        ("query", .optional(search.query)), ("where", .optional(search.filter)),
                        ("entities", .array(search.entities.map(JSONValue.string))), ("sort", .optional(search.sort)),
                    ])
                }).pretty)
            case .table:
                var table = TextTable(headers: ["NAME", "FROM", "VARIABLES", "QUERY", "WHERE", "ENTITY", "SORT"], shrinkable: [4], highlighted: [])
                for search in searches {
                    table.rows.append([search.name, search.origin.rawValue, search.variables.map { "$" + $0 }.joined(separator: " "),
                                       search.query ?? "", search.filter ?? "", search.entities.joined(separator: ", "), search.sort ?? ""])
                }
                if searches.isEmpty {
                    printNote("the index's configuration declares no saved searches: add \"searches\" to a configuration file (see the README) "
                              + "and run searchctl index --config FILE; the model's fetch requests are offered when their key paths are attributes")
                } else {
                    print(table.renderForStandardOutput())
                }
            }
        } catch {
            throw fail(error)
        }
    }
}
