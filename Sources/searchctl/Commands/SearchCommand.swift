import ArgumentParser
import Foundation
import SearchIndex

/// `searchctl search`: words, phrases, prefixes, places.
struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the index; prints object-ID URIs, best first.",
        discussion: """
            QUERY: words (all must match), "phrases", prefix*, OR, -excluded. Words of 5 or more letters also \
            match with a typo (9 or more: two), ranked below exact matches; --exact turns that off. --radius takes 500m, 25km, 10mi or meters. \
            A query that starts with -word goes after --, e.g. searchctl search --store S -- -draft. \
            Exit status 1 when nothing matches.

            Examples:
              searchctl search 横浜 --store Places.sqlite
              searchctl search --near 47.37,8.54 --radius 30km --store Places.sqlite
              searchctl search --near -33.87,151.21 --radius 50km --store Places.sqlite
              searchctl search zurich --snippets --format table --store Places.sqlite
              searchctl search --where 'country == "JP"' --sort population:desc
              searchctl search park --facet country --store Places.sqlite
              searchctl search 'san fr' --prefix-last --store Places.sqlite
              searchctl search zurch --store Places.sqlite
              searchctl search --saved citiesOf --var CODE=JP --var MIN=2000000
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case uris, table, json, jsonl }

    @OptionGroup var options: SearchOptions

    @Option(help: "uris, table, json or jsonl.")
    var format: Format = .uris

    func run() throws {
        do {
            let index = try options.location.open()
            var request = try options.request(in: index)
            // People and whole-document readers get the total; line-oriented formats stay one hit per line.
            request.countsTotal = format == .json || format == .table
            let results = try index.search(request)
            let found = results.total
            switch format {
            case .uris: results.hits.forEach { print($0.uri) }
            case .jsonl: results.hits.forEach { print($0.json.compact) }
            case .json:
                print(JSONValue.object([
                    ("found", .int(Int64(found ?? results.hits.count))), ("hits", .array(results.hits.map(\.json))),
                    ("facets", .object(results.facets.map { facet in
                        (facet.name, .array(facet.values.map { .object([("value", .string($0.value)), ("count", .int(Int64($0.count)))]) }))
                    })),
                ]).pretty)
            case .table:
                var table = TextTable(headers: ["NAME", "ENTITY", "SCORE", "DISTANCE", "URI"] + (options.snippets ? ["SNIPPET"] : []),
                                      shrinkable: options.snippets ? [5, 0] : [0], highlighted: [5])
                for hit in results.hits {
                    table.rows.append([hit.displayName, hit.entity, String(format: "%.2f", hit.score),
                                       hit.distance.map { $0 >= 1000 ? String(format: "%.1f km", $0 / 1000) : String(format: "%.0f m", $0) } ?? "",
                                       hit.uri] + (options.snippets ? [hit.snippet ?? ""] : []))
                }
                print(table.renderForStandardOutput())
                if let found, !results.hits.isEmpty {
                    print("\(results.hits.count) of \(found.grouped) found" + (request.offset > 0 ? ", from \(request.offset + 1)" : ""))
                }
                // The ten most frequent values of each facet, with the count of the rest.
                for facet in results.facets where !results.hits.isEmpty {
                    let shown = facet.values.prefix(10).map { "\($0.value.terminalSafe) \($0.count.grouped)" }
                    let rest = facet.values.count > 10 ? ", and \((facet.values.count - 10).grouped) more values" : ""
                    print("\(facet.name): " + shown.joined(separator: ", ") + rest)
                }
            }
            index.noteUnfinishedExports()
            if let suggestion = results.suggestion {
                let words = suggestion.corrections.map { "'\($0.typed.terminalSafe)' → '\($0.suggested.terminalSafe)'" }.joined(separator: ", ")
                printNote("nothing matches \(suggestion.corrections.count > 1 ? "these words" : "that word"): \(words); did you mean: \(suggestion.query.terminalSafe)")
            }
            if results.hits.isEmpty {
                try index.checkEntities(options.entities)
                throw ExitCode(ExitStatus.notFound.rawValue)
            }
        } catch {
            throw fail(error)
        }
    }
}
