import ArgumentParser
import Foundation
import SearchIndex
import SeededRandom

/// Plan regret: for every combination of words (rare, common, prefixes, typos) and places (radius from
/// 1 to 2,000 km, boxes, nearest by distance) with filters of every selectivity, each plan the index
/// has is run, and the planner's choice is compared with the fastest one.
struct PlanBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plans",
        abstract: "Plan regret: the planner's choice against the fastest plan, over a generated workload.",
        discussion: "Fetch the data first: scripts/fetch-geonames")

    @OptionGroup var data: GeoNamesIndexOptions

    @Option(help: "Requests in the workload.")
    var requests = 300

    @Option(help: "Print the N requests with the highest regret (to standard error).")
    var worst = 5

    @Option(help: "Print the N requests whose chosen plan took longest (to standard error).")
    var slowest = 0

    /// Plans a search with words and a place can take.
    static let plans: [SearchPlan] = [.textThenPlace, .placeThenText, .intersection]
    /// A plan still running after this is stopped and counted at this time.
    static let timeLimit = 2.0

    func run() throws {
        let places = try GeoNames.load(path: data.geonames)
        print("plans: GeoNames cities500 (\(grouped(Double(places.count))) places), \(requests) requests, every plan run twice (best kept)")
        print("machine: \(machineDescription())")
        print("")
        print("| items | kind | requests | chosen p50 / p99 (ms) | best p50 / p99 (ms) | regret p50 / p99 / max | over 2× | over 10× |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        for scale in data.scales {
            try measure(GeoNames.replicated(places, scale: scale))
        }
        print("")
        print("regret: the chosen plan's time ÷ the fastest plan's, per request (1 = the planner chose the best).")
    }

    private func measure(_ places: [GeoNamesPlace]) throws {
        let files = data.files(for: places)
        defer { if !data.reuse { files.remove() } }
        if !(data.reuse && FileManager.default.fileExists(atPath: files.index)) {
            files.remove()
            _ = try files.writeIndex(places) { IndexBenchmark.item($0, key: $1) }
        }
        let reader = try SearchIndex(path: files.index, mode: .readOnly)
        let workload = PlanWorkload(places: places, count: requests)
        var rows: [String: [(chosen: Double, best: Double, regret: Double)]] = [:]
        var worstCases: [(regret: Double, chosen: Double, line: String)] = []
        var disagreements = 0
        func time(_ request: SearchRequest) throws -> (seconds: Double, results: SearchResults?) {
            var best = Double.infinity, results: SearchResults? = nil
            for _ in 0..<2 {
                do {
                    let seconds = try Clock.seconds { results = try reader.search(request) }
                    best = min(best, seconds)
                } catch SearchIndexError.searchTooExpensive {
                    // A plan stopped at the time limit counts at the limit, answering nothing.
                    return (Self.timeLimit, nil)
                }
            }
            return (best, results)
        }
        for (kind, request) in workload.requests {
            var limited = request
            limited.timeLimit = Self.timeLimit
            let chosen = try time(limited)
            var times: [SearchPlan: Double] = [:]
            for plan in Self.plans {
                var forced = limited
                forced.forcedPlan = plan
                let run = try time(forced)
                times[plan] = run.seconds
                if let hits = run.results?.hits, let chosenHits = chosen.results?.hits, Set(hits.map(\.uri)) != Set(chosenHits.map(\.uri)) { disagreements += 1 }
            }
            let best = min(chosen.seconds, times.values.min() ?? chosen.seconds)
            let regret = chosen.seconds / max(best, 1e-7)
            rows[kind, default: []].append((chosen.seconds, best, regret))
            let plans = Self.plans.map { "\($0.rawValue) \(IndexBenchmark.ms(times[$0] ?? 0))" }.joined(separator: ", ")
            let plan = chosen.results?.plan.rawValue ?? "stopped"
            worstCases.append((regret, chosen.seconds, "\(kind) '\(request.query ?? "")' \(request.filter ?? "") r=\(request.radius.map { "\(Int($0 / 1000)) km" } ?? "-")\(request.near.map { String(format: " near %.4f,%.4f", $0.latitude, $0.longitude) } ?? "")\(request.boundingBox.map { String(format: " box %.3f,%.3f,%.3f,%.3f", $0.minLatitude, $0.minLongitude, $0.maxLatitude, $0.maxLongitude) } ?? ""): chose \(plan) \(IndexBenchmark.ms(chosen.seconds)) ms; \(plans)"))
        }
        let label = grouped(Double(places.count))
        for kind in PlanWorkload.kinds {
            guard let measured = rows[kind] else { continue }
            let (c50, c99) = IndexBenchmark.percentiles(measured.map(\.chosen))
            let (b50, b99) = IndexBenchmark.percentiles(measured.map(\.best))
            let (r50, r99) = IndexBenchmark.percentiles(measured.map(\.regret))
            let maximum = measured.map(\.regret).max() ?? 1
            print("| \(label) | \(kind) | \(measured.count) | \(IndexBenchmark.ms(c50)) / \(IndexBenchmark.ms(c99)) | \(IndexBenchmark.ms(b50)) / \(IndexBenchmark.ms(b99)) "
                  + "| \(String(format: "%.2f / %.2f / %.1f", r50, r99, maximum)) | \(measured.filter { $0.regret > 2 }.count) | \(measured.filter { $0.regret > 10 }.count) |")
        }
        let all = rows.values.joined()
        let (r50, r99) = IndexBenchmark.percentiles(all.map(\.regret))
        print("| \(label) | all | \(all.count) | | | \(String(format: "%.2f / %.2f / %.1f", r50, r99, all.map(\.regret).max() ?? 1)) | \(all.filter { $0.regret > 2 }.count) | \(all.filter { $0.regret > 10 }.count) |")
        FileHandle.standardError.write(Data("plans at \(label): \(disagreements) answers differed between plans\n".utf8))
        for (regret, _, line) in worstCases.sorted(by: { $0.regret > $1.regret }).prefix(worst) {
            FileHandle.standardError.write(Data(String(format: "  regret %.1f: ", regret).utf8) + Data("\(line)\n".utf8))
        }
        for (regret, _, line) in worstCases.sorted(by: { $0.chosen > $1.chosen }).prefix(slowest) {
            FileHandle.standardError.write(Data(String(format: "  slow (regret %.1f): ", regret).utf8) + Data("\(line)\n".utf8))
        }
    }
}

/// Words × places × filters, drawn deterministically from the data.
struct PlanWorkload {
    static let kinds = ["word + radius", "common word + radius", "prefix + radius", "typo + radius", "word + box",
                        "word by distance", "word + radius + filter"]
    var requests: [(kind: String, request: SearchRequest)] = []

    init(places: [GeoNamesPlace], count: Int) {
        var generator = SeededGenerator(state: 2027)
        let base = Workload(places: places, count: max(count, 20))
        let radii: [Double] = [1_000, 10_000, 50_000, 200_000, 1_000_000, 2_000_000]
        for index in 0..<count {
            let kind = Self.kinds[index % Self.kinds.count]
            let place = places[Int.random(in: 0..<places.count, using: &generator)]
            guard let center = try? Coordinate(latitude: place.latitude, longitude: place.longitude) else { continue }
            let radius = radii[Int.random(in: 0..<radii.count, using: &generator)]
            let word = base.words[index % base.words.count]
            var request: SearchRequest
            switch kind {
            case "common word + radius":
                request = SearchRequest(query: base.mixedWords[(index * 2) % base.mixedWords.count], near: center, radius: radius)
            case "prefix + radius":
                // Two to four letters: from "sa*" (a quarter of the index) to rare ones.
                request = SearchRequest(query: String(word.prefix(2 + index % 3)) + "*", near: center, radius: radius)
            case "typo + radius":
                request = SearchRequest(query: base.typos[index % base.typos.count], near: center, radius: radius)
            case "word + box":
                let half = [0.2, 2.0, 10.0][index % 3]
                let box = try? BoundingBox(minLatitude: max(-90, place.latitude - half), minLongitude: max(-180, place.longitude - half),
                                           maxLatitude: min(90, place.latitude + half), maxLongitude: min(180, place.longitude + half))
                request = SearchRequest(query: index % 2 == 0 ? word : base.mixedWords[(index * 2) % base.mixedWords.count], boundingBox: box)
            case "word by distance":
                request = SearchRequest(query: index % 2 == 0 ? word : base.mixedWords[(index * 2) % base.mixedWords.count], near: center, sort: .distance, limit: 10)
            case "word + radius + filter":
                request = SearchRequest(query: index % 2 == 0 ? word : base.mixedWords[(index * 2) % base.mixedWords.count], near: center, radius: radius)
                request.filter = [
                    "country == \"\(place.countrycode)\"",
                    "country == \"\(base.countries[index % base.countries.count])\"",
                    "population > \([1_000, 100_000, 1_000_000][index % 3])",
                ][index % 3]
            default:
                request = SearchRequest(query: word, near: center, radius: radius)
            }
            requests.append((kind, request))
        }
    }
}
