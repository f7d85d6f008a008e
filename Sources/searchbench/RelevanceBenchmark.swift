import ArgumentParser
import Foundation
import SearchIndex
import SeededRandom

/// Relevance on a gazetteer task: a major city typed by one of its names in another language or script
/// (an exonym, a transliteration), where the right answer is the most populous place carrying that exact
/// name. Measured as success@1 and MRR@10 for Searchlight and for a plain FTS5 + bm25 baseline on the
/// same places, on a tuning set and on a held-out set drawn from other cities.
struct RelevanceBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relevance",
        abstract: "Gazetteer relevance (success@1, MRR@10) of the search index versus a plain FTS5 bm25 baseline.",
        discussion: "Fetch the data first: scripts/fetch-geonames")

    @Option(help: "GeoNames cities500.json (from scripts/fetch-geonames).")
    var geonames = ".build/geonames/cities500.json"

    @Option(help: "Queries per set (a tuning set and a held-out set).")
    var queries = 500

    @Option(help: "Cities with at least this population are the ones queried.")
    var minimumPopulation = 1_000_000

    @Option(help: "Folder for the generated index files.")
    var workdir = FileManager.default.temporaryDirectory.path

    @Option(help: "Print this many misses of each set on stderr (query, expected, what came first).")
    var showMisses = 0

    func run() throws {
        let places = try GeoNames.load(path: geonames)
        let sets = GazetteerQueries.sets(places: places, minimumPopulation: minimumPopulation, count: queries)
        print("relevance: GeoNames cities500 (\(grouped(Double(places.count))) places, CC-BY 4.0 geonames.org); cities of \(grouped(Double(minimumPopulation)))+ people")
        print("machine: \(machineDescription())")
        let files = BenchmarkFiles(workdir: workdir, label: "relevance")
        defer { files.remove() }
        _ = try files.writeIndex(places) { Self.item($0, key: $1) }
        let baseline = try Baseline(path: files.baseline)
        for start in stride(from: 0, to: places.count, by: 5_000) {
            try baseline.insert(Array(places[start..<min(start + 5_000, places.count)]), firstKey: start)
        }
        let reader = try SearchIndex(path: files.index, mode: .readOnly)
        print("")
        print("| set | queries | success@1 Searchlight | success@1 baseline | MRR@10 Searchlight | MRR@10 baseline |")
        print("|---|---:|---:|---:|---:|---:|")
        for set in sets {
            var ours = RankingScore(), theirs = RankingScore()
            var misses: [String] = []
            for query in set.queries {
                let mine = (try? reader.search(SearchRequest(query: query.text, limit: 10)).hits.map(\.uri)) ?? []
                let baselines = try baseline.text(Self.phrase(query.text))
                ours.add(rankOf: query.expectedURI, in: mine)
                theirs.add(rankOf: query.expectedURI, in: Array(baselines.prefix(10)))
                if mine.first != query.expectedURI, misses.count < showMisses {
                    misses.append("\(query.text) → expected \(query.expectedName) (\(query.expectedURI)), first \(mine.first.map { Self.name(of: $0, places) } ?? "nothing")")
                }
            }
            print("| \(set.name) | \(set.queries.count) | \(ours.successAt1) | \(theirs.successAt1) | \(ours.meanReciprocalRank) | \(theirs.meanReciprocalRank) |")
            if !misses.isEmpty { FileHandle.standardError.write(Data((["misses (\(set.name)):"] + misses).joined(separator: "\n  ").utf8 + Data("\n".utf8))) }
        }
        print("")
        print("success@1: the expected place first; MRR@10: mean of 1/rank within the first 10 (0 when absent).")
    }

    /// An item as a zero-configuration-like mapping would make it: the name, every alternate name as its
    /// own value, the country code, the population as static rank.
    static func item(_ place: GeoNamesPlace, key: Int) -> IndexedItem {
        IndexedItem(uri: GazetteerQueries.uri(key), entity: "Place", displayName: place.name, text: place.alternatenames,
                    keywords: [place.countrycode], latitude: place.latitude, longitude: place.longitude, rank: Double(place.population))
    }

    /// The baseline's natural query: the name as one FTS5 phrase.
    static func phrase(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    static func name(of uri: String, _ places: [GeoNamesPlace]) -> String {
        guard let key = uri.split(separator: "p").last.flatMap({ Int($0) }), places.indices.contains(key - 1) else { return uri }
        let place = places[key - 1]
        return "\(place.name), \(place.countrycode), \(grouped(Double(place.population)))"
    }
}

/// success@1 and MRR@10 accumulated over queries.
struct RankingScore {
    private var count = 0, first = 0
    private var reciprocalRanks = 0.0

    mutating func add(rankOf expected: String, in results: [String]) {
        count += 1
        guard let position = results.prefix(10).firstIndex(of: expected) else { return }
        if position == 0 { first += 1 }
        reciprocalRanks += 1 / Double(position + 1)
    }

    var successAt1: String { count == 0 ? "–" : String(format: "%.3f", Double(first) / Double(count)) }
    var meanReciprocalRank: String { count == 0 ? "–" : String(format: "%.3f", reciprocalRanks / Double(count)) }
}

/// The query sets: names of major cities other than their own, each with the most populous place that
/// carries the name exactly (usually the city itself; sometimes a bigger namesake).
enum GazetteerQueries {
    struct Query {
        var text: String
        var expectedURI: String
        var expectedName: String
    }

    struct QuerySet {
        var name: String
        var queries: [Query]
    }

    static func uri(_ key: Int) -> String { "x-coredata://BENCH/Place/p\(key + 1)" }

    /// A tuning set and a held-out set, from disjoint halves of the major cities.
    static func sets(places: [GeoNamesPlace], minimumPopulation: Int, count: Int) -> [QuerySet] {
        // The most populous carrier of every name (ties: the lower GeoNames id, places are sorted by it).
        var carrier: [String: Int] = [:]
        for (key, place) in places.enumerated() {
            for name in Set([place.name] + place.alternatenames) {
                if let current = carrier[name], places[current].population >= place.population { continue }
                carrier[name] = key
            }
        }
        var majors = places.indices.filter { places[$0].population >= minimumPopulation }
        var generator = SeededGenerator(seed: 7)
        majors.shuffle(using: &generator)
        let halves = [("tuning", Array(majors[..<(majors.count / 2)]), UInt64(1)), ("held-out", Array(majors[(majors.count / 2)...]), UInt64(2))]
        return halves.map { name, cities, seed in
            var candidates: [Query] = []
            for key in cities {
                let place = places[key]
                for alternate in place.alternatenames where usable(alternate, of: place) {
                    guard let expected = carrier[alternate] else { continue }
                    candidates.append(Query(text: alternate, expectedURI: uri(expected), expectedName: places[expected].name))
                }
            }
            var generator = SeededGenerator(seed: seed)
            candidates.shuffle(using: &generator)
            return QuerySet(name: name, queries: Array(candidates.prefix(count)))
        }
    }

    /// A name people type: not the city's own name, no codes (`MOW`, `YOK`), no digits, at least 3 letters.
    static func usable(_ name: String, of place: GeoNamesPlace) -> Bool {
        guard name != place.name, name.count >= 3, !name.contains(where: \.isNumber) else { return false }
        let code = name.count <= 4 && name.allSatisfy { $0.isASCII && $0.isUppercase }
        return !code
    }
}
