import ArgumentParser

/// `searchbench`: Searchlight's benchmarks, each measured in one run beside a raw-SQLite baseline.
@main
struct Searchbench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "searchbench",
        abstract: "Benchmarks, each compared in the same run with a raw-SQLite baseline doing the same work.",
        discussion: "Build with -c release: swift run -c release searchbench store-read | index --geonames .build/geonames/cities500.json",
        subcommands: [StoreReadBenchmark.self, IndexBenchmark.self, PlanBenchmark.self, FollowBenchmark.self, RelevanceBenchmark.self, ExportBenchmark.self, StormBenchmark.self, FleetBenchmark.self, QueryBenchmark.self])
}
