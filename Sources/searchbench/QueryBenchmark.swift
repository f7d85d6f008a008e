import ArgumentParser
import Foundation
import SearchIndex

/// One search run again and again against an existing index: its latency percentiles, for profiling one
/// query shape (under `perf record`, say) without a workload around it.
struct QueryBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "One search repeated against an index file: p50, p99 and the slowest run.",
        discussion: "searchbench query --index /tmp/idx/searchbench-index-939632.searchindex '\"San Juan\"' --runs 2000")

    @Option(help: "The index file.")
    var index: String

    @Argument(help: "The words, as searchctl search takes them.")
    var query: String?

    @Option(help: "Reference point: LAT,LON.")
    var near: String?

    @Option(help: "Radius in meters.")
    var radius: Double?

    @Option(help: "An attribute filter (NSPredicate syntax).")
    var filter: String?

    @Option(help: "An attribute to facet by.")
    var facet: String?

    @Option(help: "Order: relevance or distance (with --near).")
    var sort: String?

    @Option(help: "Hits per page.")
    var limit = 20

    @Flag(help: "No typo tolerance.")
    var exact = false

    @Option(help: "Run this plan instead of the planner's: text-then-place, place-then-text or intersection (with --near).")
    var plan: String?

    @Option(help: "Runs.")
    var runs = 1_000

    @Flag(help: "Also run it with the leader lists off (every match scored) and say whether the page is the same.")
    var checkFullScoring = false

    func run() throws {
        let reader = try SearchIndex(path: index, mode: .readOnly)
        var request = SearchRequest(query: query)
        if let near {
            let parts = near.split(separator: ",").compactMap { Double($0) }
            guard parts.count == 2 else { throw ValidationError("--near takes LAT,LON") }
            request.near = try Coordinate(latitude: parts[0], longitude: parts[1])
        }
        request.radius = radius
        request.filter = filter
        request.facets = facet.map { [$0] } ?? []
        request.typoTolerance = !exact
        request.limit = limit
        if let sort {
            guard let order = SearchRequest.Sort(rawValue: sort) else { throw ValidationError("--sort: relevance or distance") }
            request.sort = order
        }
        if let plan {
            guard let forced = SearchPlan(rawValue: plan) else { throw ValidationError("--plan: one of text-then-place, place-then-text, intersection") }
            request.forcedPlan = forced
        }
        var times: [Double] = []
        var hits = 0
        for _ in 0..<max(1, runs) {
            times.append(try Clock.seconds { hits = try reader.search(request).hits.count })
        }
        if checkFullScoring {
            var whole = request
            whole.usesTermLeaders = false
            func page(_ request: SearchRequest) throws -> [String] { try reader.search(request).hits.map { "\($0.uri) \($0.score)" } }
            print(try page(request) == page(whole) ? "same page as full scoring" : "DIFFERENT page from full scoring")
        }
        let (p50, p99) = IndexBenchmark.percentiles(times)
        print("\(hits) hits, \(times.count) runs: p50 \(IndexBenchmark.ms(p50)) ms, p99 \(IndexBenchmark.ms(p99)) ms, slowest \(IndexBenchmark.ms(times.max() ?? 0)) ms")
    }
}
