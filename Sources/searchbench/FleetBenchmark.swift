import ArgumentParser
import Foundation
import PostgresIndex
import SearchIndex

/// `searchbench fleet`: many stores, one PostgreSQL database. `appsim` writes N stores that together hold
/// the Corpus once; N `searchctl index` processes export them into one database at once (as N machines
/// would), and one process writes the same N stores into one SQLite index for comparison. Then the
/// same queries run against both merged indexes.
struct FleetBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "N stores exported concurrently into one PostgreSQL database; queries on the merged index beside SQLite.",
        discussion: """
            Needs a build with the PostgreSQL trait and a database to write (it is emptied first): \
            swift build -c release --traits PostgreSQL, then
              searchbench fleet --postgres postgres://USER@127.0.0.1:5432/fleet --size 1m
            """)

    @OptionGroup var corpus: CorpusRunOptions

    @Option(help: CorpusRunOptions.sizeHelp)
    var size = "1m"

    @Option(help: "Stores, each exported by its own searchctl process.")
    var stores = 16

    @Option(help: ArgumentHelp("The PostgreSQL database to write (every store in it is removed first).", valueName: "url"))
    var postgres: String

    @Option(help: "Queries of each kind.")
    var queries = 200

    func validate() throws {
        guard stores >= 1 else { throw ValidationError("--stores must be at least 1") }
        guard PostgresLocation.isPostgres(postgres) else { throw ValidationError("--postgres must be postgres://USER@HOST:PORT/DATABASE") }
    }

    func run() throws {
        guard PostgresBackend.isBuilt else { throw PostgresIndexError.notBuilt }
        let config = try corpus.configuration()
        let location = try PostgresLocation(postgres)
        print("fleet: \(stores) stores of the \(size) Corpus, \(machineDescription())")

        // The stores, two appsim processes at a time (one per core).
        let paths = (0..<stores).map { corpus.file("searchbench-fleet-\(size)-\($0)-of-\(stores).sqlite") }
        var writing: [ChildProcess.Running] = []
        for (part, path) in paths.enumerated() where !(corpus.reuse && FileManager.default.fileExists(atPath: path)) {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            writing.append(try ChildProcess.spawn(corpus.binaries + "/appsim", ["corpus", "--size", size, "--part", "\(part)/\(stores)", "--out", path]))
            if writing.count == 2 { try Self.finish(&writing, "appsim corpus") }
        }
        try Self.finish(&writing, "appsim corpus")

        // PostgreSQL: every store at once, each by its own exporter process.
        try Self.dropIndex(location)
        var exporters: [ChildProcess.Running] = []
        let postgresSeconds = try Clock.seconds {
            exporters = try paths.map { try ChildProcess.spawn(corpus.binaries + "/searchctl", ["index", "--store", $0, "--config", config, "--index", postgres, "--quiet"]) }
            try Self.finish(&exporters, "searchctl index into PostgreSQL")
        }
        // SQLite: one index file holds one writer, so one process writes every store into it.
        let sqlitePath = corpus.file("searchbench-fleet-\(size)-\(stores).searchindex")
        for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: sqlitePath + suffix) }
        let sqliteRun = try ChildProcess.run(corpus.binaries + "/searchctl",
                                             ["index"] + paths.flatMap { ["--store", $0] } + ["--config", config, "--index", sqlitePath, "--quiet"])
        guard sqliteRun.status == 0 else { throw BenchmarkError("searchctl index into SQLite failed (exit \(sqliteRun.status))") }

        let postgresIndex = try PostgresBackend.openReader(location)
        let sqliteIndex = try SearchIndex(path: sqlitePath, mode: .readOnly)
        let items = try sqliteIndex.statistics().itemsPerEntity.values.reduce(0, +)
        let postgresItems = try postgresIndex.statistics().itemsPerEntity.values.reduce(0, +)
        guard items == postgresItems else { throw BenchmarkError("the indexes differ: \(items) items in SQLite, \(postgresItems) in PostgreSQL") }

        print("\n| export (\(grouped(Double(items))) items, \(stores) stores) | seconds | items/s |")
        print("|---|---:|---:|")
        print("| PostgreSQL, \(stores) exporter processes at once | \(String(format: "%.1f", postgresSeconds)) | \(grouped(Double(items) / postgresSeconds)) |")
        print("| SQLite, one process, stores one after another | \(String(format: "%.1f", sqliteRun.seconds)) | \(grouped(Double(items) / sqliteRun.seconds)) |")

        let workload = try FleetWorkload(corpusFolder: corpus.corpusFolder, count: queries)
        print("\n| query (top 20) | PostgreSQL p50 / p99 ms | SQLite p50 / p99 ms | same answers |")
        print("|---|---:|---:|---:|")
        for (name, requests) in workload.kinds {
            // Interleaved, so that both see the same machine state.
            var postgresTimes: [Double] = [], sqliteTimes: [Double] = []
            var same = 0
            for request in requests {
                var postgresHits = Answer(), sqliteHits = Answer()
                // The answer: the hits, the facets and the suggestion.
                postgresTimes.append(try Clock.seconds { postgresHits = Answer(try postgresIndex.search(request), ordersByAttribute: request.sortAttribute != nil) })
                sqliteTimes.append(try Clock.seconds { sqliteHits = Answer(try sqliteIndex.search(request), ordersByAttribute: request.sortAttribute != nil) })
                if postgresHits == sqliteHits { same += 1 }
            }
            let (p50, p99) = IndexBenchmark.percentiles(postgresTimes)
            let (s50, s99) = IndexBenchmark.percentiles(sqliteTimes)
            print("| \(name) | \(IndexBenchmark.ms(p50)) / \(IndexBenchmark.ms(p99)) | \(IndexBenchmark.ms(s50)) / \(IndexBenchmark.ms(s99)) | \(same)/\(requests.count) |")
        }
    }

    /// Waits for every child; fails naming the step when one failed.
    static func finish(_ children: inout [ChildProcess.Running], _ step: String) throws {
        defer { children = [] }
        for child in children {
            let outcome = try ChildProcess.wait(child)
            guard outcome.status == 0 else { throw BenchmarkError("\(step) failed (exit \(outcome.status))") }
        }
    }

    /// Removes every store from the database, so that every run exports from nothing; gives their locks
    /// up at once, before the exporters claim them.
    static func dropIndex(_ location: PostgresLocation) throws {
        let writer = try PostgresBackend.openWriter(location)
        defer { writer.release() }
        for checkpoint in try writer.checkpoints() { try writer.removeStore(uuid: checkpoint.storeUUID) }
    }
}

/// What two backends must agree on for a search: its hits (by URI, in order), facets and suggestion.
/// Under an order by attribute, items with equal values may come in another order (by URI on
/// PostgreSQL, in index order on SQLite), and the fleet's 16 stores each hold every country: hits are
/// then compared by what they show (name and score), not by URI.
struct Answer: Equatable {
    var hits: [String] = []
    var facets: [Facet] = []
    var suggestion: QuerySuggestion?

    init() {}

    init(_ results: SearchResults, ordersByAttribute: Bool) {
        hits = results.hits.map { ordersByAttribute ? "\($0.entity) \($0.displayName) \($0.score)" : $0.uri }
        facets = results.facets
        suggestion = results.suggestion
    }
}

/// The fleet's queries, made from the Corpus's own names and places: words, prefixes, phrases, places
/// within 30 km, the 10 nearest, a prefix within 100 km, a mistyped word, a filter ordered by an attribute,
/// a word in one country, a word with a facet.
struct FleetWorkload {
    var kinds: [(String, [SearchRequest])] = []

    init(corpusFolder: String, count: Int) throws {
        let file = URL(fileURLWithPath: corpusFolder).appendingPathComponent("places.tsv.gz").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-dc", file]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var places: [(name: String, latitude: Double, longitude: Double, country: String)] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 6, let latitude = Double(fields[3]), let longitude = Double(fields[4]) else { continue }
            places.append((String(fields[2]), latitude, longitude, String(fields[5])))
        }
        guard !places.isEmpty else { throw BenchmarkError("no places in \(file)") }
        // Evenly spaced places: a fixed, spread-out sample.
        let sample = stride(from: 0, to: places.count, by: max(1, places.count / count)).prefix(count).map { places[$0] }
        func words(_ name: String) -> [String] { name.split(whereSeparator: { !$0.isLetter }).map(String.init).filter { $0.count >= 3 } }
        func request(_ query: String?, near: (Double, Double)? = nil, radius: Double? = nil, prefix: Bool = false) -> SearchRequest {
            var request = SearchRequest(query: query, near: near.flatMap { try? Coordinate(latitude: $0.0, longitude: $0.1) }, radius: radius, limit: 20)
            request.typoTolerance = false
            request.lastWordIsPrefix = prefix
            return request
        }
        kinds.append(("one word", sample.compactMap { words($0.name).first.map { request($0) } }))
        kinds.append(("prefix (3 letters)", sample.compactMap { words($0.name).first.map { request(String($0.prefix(3)), prefix: true) } }))
        kinds.append(("phrase", sample.compactMap { place in
            let parts = words(place.name)
            return parts.count >= 2 ? request("\"\(parts[0]) \(parts[1])\"") : nil
        }))
        kinds.append(("every place within 30 km", sample.map { request(nil, near: ($0.latitude, $0.longitude), radius: 30_000) }))
        kinds.append(("10 nearest", sample.map { var nearest = request(nil, near: ($0.latitude, $0.longitude)); nearest.limit = 10; return nearest }))
        kinds.append(("a prefix within 100 km", sample.compactMap { place in
            words(place.name).first.map { request(String($0.prefix(2)), near: (place.latitude, place.longitude), radius: 100_000, prefix: true) }
        }))
        // A word of 6+ letters with its last two letters swapped: typo tolerance on.
        kinds.append(("mistyped word (typos on)", sample.compactMap { place in
            guard let word = words(place.name).first(where: { $0.count >= 6 && !$0.contains(where: \.isNumber) }) else { return nil }
            var letters = Array(word.lowercased())
            letters.swapAt(letters.count - 1, letters.count - 2)
            var mistyped = request(String(letters))
            mistyped.typoTolerance = true
            return mistyped
        }))
        kinds.append(("--where population > n --sort population:desc", sample.enumerated().map { index, _ in
            var filtered = request(nil)
            filtered.filter = "population > \(1_000 * (index % 50 + 1))"
            filtered.sortAttribute = AttributeOrder(name: "population", descending: true)
            return filtered
        }))
        kinds.append(("word + --where country == code", sample.compactMap { place in
            words(place.name).first.map { word in
                var filtered = request(word)
                filtered.filter = "country == '\(place.country)'"
                return filtered
            }
        }))
        kinds.append(("word + --facet country", sample.compactMap { place in
            words(place.name).first.map { word in
                var faceted = request(word)
                faceted.facets = ["country"]
                return faceted
            }
        }))
    }
}
