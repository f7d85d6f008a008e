import ArgumentParser
import Foundation
import SeededRandom
import GRDBSQLite
import SearchIndex

/// Indexing and query latency of Searchlight's index against a naive SQLite setup on the same data:
/// FTS5 with `unicode61 remove_diacritics 2` plus an R-tree, plain inserts, naive joins and scans.
struct IndexBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Bulk indexing and query latencies of the search index versus a naive FTS5 + R-tree baseline.",
        discussion: "Fetch the data first: scripts/fetch-geonames")

    @OptionGroup var data: GeoNamesIndexOptions

    @Option(help: "Queries per kind.")
    var queries = 200

    @Option(help: "Run only the query rows whose name contains this text. Repeatable.")
    var only: [String] = []

    @Option(help: "Print each row's N slowest queries (to standard error).")
    var slowest = 0

    func run() throws {
        let places = try GeoNames.load(path: data.geonames)
        print("index: GeoNames cities500 (\(grouped(Double(places.count))) places, CC-BY 4.0 geonames.org), \(queries) queries per kind")
        print("machine: \(machineDescription())")
        print("")
        print("| measure | items | Searchlight | baseline | ratio |")
        print("|---|---:|---:|---:|---:|")
        for scale in data.scales {
            try measure(GeoNames.replicated(places, scale: scale))
        }
        print("")
        print("ratio: items/s ours ÷ baseline; latencies baseline ÷ ours (above 1 = Searchlight faster).")
    }

    private func measure(_ places: [GeoNamesPlace]) throws {
        let files = data.files(for: places)
        defer { if !data.reuse { files.remove() } }
        let label = grouped(Double(places.count))

        let baseline: Baseline
        if data.reuse && files.exist {
            // An index an older build wrote is migrated first (a read-only connection cannot).
            let seconds = try Clock.seconds { _ = try SearchIndex(path: files.index, mode: .readWrite(permissions: nil)) }
            if seconds > 0.1 { FileHandle.standardError.write(Data("opened \(files.index) for writing in \(String(format: "%.2f", seconds)) s (migrations)\n".utf8)) }
            baseline = try Baseline(path: files.baseline, existing: true)
        } else {
            files.remove()
            // Bulk indexing.
            // A first export ends by merging the full-text segments (counted in our time).
            let oursSeconds = try files.writeIndex(places) { Self.item($0, key: $1) }
            baseline = try Baseline(path: files.baseline)
            var baselineSeconds = 0.0
            for start in stride(from: 0, to: places.count, by: 5_000) {
                let slice = Array(places[start..<min(start + 5_000, places.count)])
                baselineSeconds += try Clock.seconds { try baseline.insert(slice, firstKey: start) }
            }
            let ours = Double(places.count) / oursSeconds, theirs = Double(places.count) / baselineSeconds
            print("| bulk indexing (items/s) | \(label) | \(grouped(ours)) | \(grouped(theirs)) | \(String(format: "%.2f", ours / theirs))× |")
        }

        // What a follower lists while idle (the frequent prefixes' leader lists, registered when the export
        // ended): done here before the queries, and timed apart from the bulk load.
        let writer = try SearchIndex(path: files.index, mode: .readWrite(permissions: nil))
        var upkeep = 0
        let upkeepSeconds = try Clock.seconds { while try writer.maintain(budget: 1) { upkeep += 1 } }
        if upkeep > 0 { print("| idle upkeep: stale leader lists listed, facet columns stored (s) | \(label) | \(String(format: "%.2f", upkeepSeconds)) | | |") }

        // Queries, through a read-only connection of its own, as searchctl opens the index.
        let reader = try SearchIndex(path: files.index, mode: .readOnly)
        let workload = Workload(places: places, count: queries)
        // Untimed, one search each: what a process does once (its connection's first statements, the
        // tokenizer's ICU data), which the first timed query would otherwise carry (Klein: 163 ms, then 0.2).
        for word in ["warm", "up"] {
            _ = try reader.search(SearchRequest(query: word))
            _ = try baseline.text("\"\(word)\"")
        }
        var agreements = 0, sameSets = 0, checks = 0, unlisted = 0, unlistedChecks = 0
        func row(_ name: String, _ requests: [SearchRequest], _ naive: (SearchRequest) throws -> [String], compare: Bool = false,
                 scoredWhole: Bool = false) throws {
            guard only.isEmpty || only.contains(where: { name.contains($0) }) else { return }
            var oursTimes: [Double] = [], baselineTimes: [Double] = []
            for request in requests {
                var mine: [String] = [], theirs: [String] = []
                oursTimes.append(try Clock.seconds { mine = try reader.search(request).hits.map(\.uri) })
                baselineTimes.append(try Clock.seconds { theirs = try naive(request) })
                if scoredWhole {
                    // Untimed: the same page with the leader lists off (every match scored), hits and scores.
                    var whole = request
                    whole.usesTermLeaders = false
                    let listed = try reader.search(request).hits.map { "\($0.uri) \($0.score)" }
                    unlistedChecks += 1
                    if try listed == reader.search(whole).hits.map({ "\($0.uri) \($0.score)" }) { unlisted += 1 }
                }
                if compare {
                    checks += 1
                    if mine == theirs { agreements += 1 }
                    if mine.sorted() == theirs.sorted() { sameSets += 1 }
                }
            }
            let (o50, o99) = Self.percentiles(oursTimes), (b50, b99) = Self.percentiles(baselineTimes)
            for (time, request) in zip(oursTimes, requests).sorted(by: { $0.0 > $1.0 }).prefix(slowest) {
                FileHandle.standardError.write(Data("  \(name): \(Self.ms(time)) ms \(request.query ?? "") \(request.filter ?? "") \(request.boundingBox.map { "\($0.minLatitude),\($0.minLongitude),\($0.maxLatitude),\($0.maxLongitude)" } ?? "")\(request.near.map { " near \($0.latitude),\($0.longitude)" } ?? "")\n".utf8))
            }
            print("| \(name) p50 / p99 (ms) | \(label) | \(Self.ms(o50)) / \(Self.ms(o99)) | \(Self.ms(b50)) / \(Self.ms(b99)) | \(String(format: "%.1f", b50 / o50))× / \(String(format: "%.1f", b99 / o99))× |")
        }
        try row("text top-20", workload.words.map { SearchRequest(query: $0) }, { try baseline.text("\"\($0.query ?? "")\"") }, scoredWhole: true)
        try row("text top-20, --exact", workload.words.map { word in
            var request = SearchRequest(query: word)
            request.typoTolerance = false
            return request
        }) { try baseline.text("\"\($0.query ?? "")\"") }
        // A word of 5+ letters with one edit after its first letter; the baseline applies the same rule by
        // reading the vocabulary's terms with that first letter and measuring each.
        try row("typo top-20 (one edit)", workload.typos.map { SearchRequest(query: $0) }, { try baseline.typo($0.query ?? "") }, scoredWhole: true)
        try row("prefix top-20", workload.prefixes.map { SearchRequest(query: $0 + "*") }, { try baseline.text("\"\(($0.query ?? "").dropLast())\" *") },
                scoredWhole: true)
        try row("phrase top-20", workload.phrases.map { SearchRequest(query: "\"\($0)\"") }, { try baseline.text($0.query ?? "") }, scoredWhole: true)
        try row("bbox 1°×1°", workload.boxes.map { SearchRequest(boundingBox: $0) }, { try baseline.box($0.boundingBox) }, compare: true)
        try row("radius 25 km", workload.centers.map { SearchRequest(near: $0, radius: 25_000) }, { try baseline.radius(center: $0.near, radius: 25_000) }, compare: true)
        try row("radius 30 km, every hit", workload.centers.map { SearchRequest(near: $0, radius: 30_000, limit: 100_000) }, {
            try baseline.radius(center: $0.near, radius: 30_000, limit: 100_000)
        }, compare: true)
        try row("kNN-10", workload.centers.map { SearchRequest(near: $0, limit: 10) }, { try baseline.nearest(center: $0.near, k: 10) }, compare: true)
        try row("text + radius 50 km", zip(workload.mixedWords, workload.centers).map { SearchRequest(query: $0, near: $1, radius: 50_000) }) {
            try baseline.textNear("\"\($0.query ?? "")\"", center: $0.near, radius: 50_000)
        }
        // An app's search field given the user's location: the best matches anywhere, each with its distance.
        try row("text top-20 near a point, any distance", zip(workload.mixedWords, workload.centers).map { SearchRequest(query: $0, near: $1) }, {
            try baseline.textNear("\"\($0.query ?? "")\"", center: $0.near, radius: .infinity)
        }, scoredWhole: true)
        // An app's search field with a map: a 3-letter prefix within 100 km.
        try row("prefix + radius 100 km", zip(workload.prefixes, workload.centers).map { SearchRequest(query: $0 + "*", near: $1, radius: 100_000) }) {
            try baseline.textNear("\"\(($0.query ?? "").dropLast())\" *", center: $0.near, radius: 100_000)
        }
        // Attribute filters, orders and facets; the baseline holds the same values as plain columns.
        try row("filter population > n, top-20 by population", workload.thresholds.map { threshold in
            var request = SearchRequest(limit: 20)
            request.filter = "population > \(threshold)"
            request.sortAttribute = AttributeOrder(name: "population", descending: true)
            return request
        }, { try baseline.uris("SELECT uri FROM places WHERE population > ? ORDER BY population DESC LIMIT 20", [String(($0.filter ?? "").split(separator: " ").last ?? "0")]) },
            compare: true)
        try row("text + country filter top-20", zip(workload.mixedWords, workload.countries).map { word, country in
            var request = SearchRequest(query: word)
            request.filter = "country == \"\(country)\""
            return request
        }) { request in
            try baseline.uris("""
                SELECT p.uri FROM places_fts JOIN places p ON p.id = places_fts.rowid
                WHERE places_fts MATCH ? AND p.country = ? ORDER BY bm25(places_fts, 10.0, 6.0, 2.0, 1.0) LIMIT 20
                """, ["\"\(request.query ?? "")\"", String((request.filter ?? "").split(separator: "\"").last ?? "")])
        }
        try row("text + facet country", workload.mixedWords.map { word in
            var request = SearchRequest(query: word)
            request.facets = ["country"]
            return request
        }) { request in
            try baseline.uris("""
                SELECT p.country || ' ' || COUNT(*) FROM places_fts JOIN places p ON p.id = places_fts.rowid
                WHERE places_fts MATCH ? GROUP BY p.country ORDER BY COUNT(*) DESC
                """, ["\"\(request.query ?? "")\""])
        }
        // Replicated places share populations and distances: tied hits may come in another order than the baseline's.
        FileHandle.standardError.write(Data("checks: \(agreements) of \(checks) spatial and filter answers identical to the baseline's, \(sameSets) the same hits\n".utf8))
        FileHandle.standardError.write(Data("checks: \(unlisted) of \(unlistedChecks) text pages identical to scoring every match (lists off), hits and scores\n".utf8))
    }

    static func item(_ place: GeoNamesPlace, key: Int) -> IndexedItem {
        IndexedItem(uri: "x-coredata://BENCH/Place/p\(key + 1)", entity: "Place", displayName: place.name,
                    text: [place.alternatenames.joined(separator: ", ")], keywords: [place.countrycode, place.timezone],
                    latitude: place.latitude, longitude: place.longitude, rank: Double(place.population),
                    attributes: ["population": [.number(Double(place.population))], "country": [.string(place.countrycode)]])
    }

    static func percentiles(_ times: [Double]) -> (Double, Double) {
        let sorted = times.sorted()
        guard !sorted.isEmpty else { return (0, 0) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)])
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }
}

/// Deterministic query sets drawn from the data.
struct Workload {
    var words: [String] = [], prefixes: [String] = [], phrases: [String] = [], mixedWords: [String] = [], typos: [String] = []
    var boxes: [BoundingBox] = [], centers: [Coordinate] = []
    var thresholds: [Int] = [], countries: [String] = []

    init(places: [GeoNamesPlace], count: Int) {
        var generator = SeededGenerator(state: 2026)
        func asciiWords(_ name: String) -> [String] {
            name.split(separator: " ").map(String.init).filter { $0.count >= 3 && $0.allSatisfy { $0.isASCII && $0.isLetter } }
        }
        var frequency: [String: Int] = [:]
        for place in places.prefix(300_000) { for word in asciiWords(place.name) { frequency[word.lowercased(), default: 0] += 1 } }
        let common = frequency.sorted { $0.value > $1.value }.prefix(20).map(\.key)
        while words.count < count || phrases.count < count || typos.count < count {
            let place = places[Int.random(in: 0..<places.count, using: &generator)]
            let candidates = asciiWords(place.name)
            if let word = candidates.randomElement(using: &generator), words.count < count {
                words.append(word)
                prefixes.append(String(word.prefix(3)))
            }
            if let word = candidates.filter({ $0.count >= 5 }).randomElement(using: &generator), typos.count < count {
                var letters = Array(word.lowercased())
                let position = Int.random(in: 1..<letters.count, using: &generator)
                switch Int.random(in: 0...3, using: &generator) {
                case 0: letters.remove(at: position)
                case 1: letters.insert(Character(String(UnicodeScalar(UInt8.random(in: 97...122, using: &generator)))), at: position)
                case 2: letters[position] = Character(String(UnicodeScalar(UInt8.random(in: 97...122, using: &generator))))
                default: if position + 1 < letters.count { letters.swapAt(position, position + 1) }
                }
                // A swap at the end or a letter replaced by itself leaves the word as it was: not a typo.
                if letters.count >= 5, String(letters) != word.lowercased() { typos.append(String(letters)) }
            }
            if candidates.count >= 2, phrases.count < count { phrases.append(candidates[0] + " " + candidates[1]) }
        }
        for index in 0..<count {
            let place = places[Int.random(in: 0..<places.count, using: &generator)]
            thresholds.append([1_000, 100_000, 1_000_000, 5_000_000].randomElement(using: &generator) ?? 1_000)
            countries.append(place.countrycode)
            mixedWords.append(index % 2 == 0 ? common[index / 2 % common.count] : words[index])
            if let center = try? Coordinate(latitude: place.latitude, longitude: place.longitude) { centers.append(center) }
            if let box = try? BoundingBox(minLatitude: max(-90, place.latitude - 0.5), minLongitude: max(-180, place.longitude - 0.5),
                                          maxLatitude: min(90, place.latitude + 0.5), maxLongitude: min(180, place.longitude + 0.5)) {
                boxes.append(box)
            }
        }
    }
}

/// The naive baseline: what one writes straight on SQLite without thinking about plans.
final class Baseline {
    let sqlite: RawSQLite

    init(path: String, existing: Bool = false) throws {
        sqlite = try RawSQLite(path: path)
        if existing { return }
        try sqlite.execute("""
            PRAGMA journal_mode = WAL;
            CREATE TABLE places (id INTEGER PRIMARY KEY, uri TEXT, latitude REAL, longitude REAL, population INTEGER, country TEXT);
            CREATE VIRTUAL TABLE places_fts USING fts5(name, title, text, keywords, tokenize = 'unicode61 remove_diacritics 2');
            CREATE VIRTUAL TABLE places_geo USING rtree(id, min_lat, max_lat, min_lon, max_lon);
            CREATE VIRTUAL TABLE places_vocab USING fts5vocab(places_fts, 'row');
            """)
    }

    /// Typo tolerance as one writes it on SQLite alone: every vocabulary term with the word's first letter,
    /// measured (optimal string alignment), those within the edits OR-ed into one MATCH.
    func typo(_ word: String) throws -> [String] {
        let query = Array(word.unicodeScalars)
        guard let first = query.first else { return [] }
        let allowed = query.count >= 9 ? 2 : query.count >= 5 ? 1 : 0
        let statement = try sqlite.statement("SELECT term FROM places_vocab WHERE term >= ? AND term < ?")
        RawSQLite.bind(statement, 1, String(first))
        RawSQLite.bind(statement, 2, String(Unicode.Scalar(first.value + 1) ?? first))
        var terms = ["\"\(word)\""]
        while sqlite3_step(statement) == SQLITE_ROW {
            let term = Array(RawSQLite.text(statement, 0).unicodeScalars)
            if abs(term.count - query.count) <= allowed, term != query, Self.distance(term, query) <= allowed {
                terms.append("\"\(String(String.UnicodeScalarView(term)))\"")
            }
        }
        return try text(terms.joined(separator: " OR "))
    }

    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    func insert(_ places: [GeoNamesPlace], firstKey: Int) throws {
        try sqlite.execute("BEGIN")
        for (offset, place) in places.enumerated() {
            let id = Int64(firstKey + offset + 1)
            let row = try sqlite.statement("INSERT INTO places (id, uri, latitude, longitude, population, country) VALUES (?, ?, ?, ?, ?, ?)")
            RawSQLite.bind(row, 6, place.countrycode)
            sqlite3_bind_int64(row, 1, id)
            RawSQLite.bind(row, 2, "x-coredata://BENCH/Place/p\(id)")
            sqlite3_bind_double(row, 3, place.latitude)
            sqlite3_bind_double(row, 4, place.longitude)
            sqlite3_bind_int64(row, 5, Int64(place.population))
            guard sqlite3_step(row) == SQLITE_DONE else { throw BenchmarkError("insert failed") }
            let text = try sqlite.statement("INSERT INTO places_fts (rowid, name, title, text, keywords) VALUES (?, ?, '', ?, ?)")
            sqlite3_bind_int64(text, 1, id)
            RawSQLite.bind(text, 2, place.name)
            RawSQLite.bind(text, 3, place.alternatenames.joined(separator: ", "))
            RawSQLite.bind(text, 4, place.countrycode + " " + place.timezone)
            guard sqlite3_step(text) == SQLITE_DONE else { throw BenchmarkError("fts insert failed") }
            let geo = try sqlite.statement("INSERT INTO places_geo VALUES (?, ?, ?, ?, ?)")
            sqlite3_bind_int64(geo, 1, id)
            for (index, value) in [place.latitude, place.latitude, place.longitude, place.longitude].enumerated() {
                sqlite3_bind_double(geo, Int32(index + 2), value)
            }
            guard sqlite3_step(geo) == SQLITE_DONE else { throw BenchmarkError("rtree insert failed") }
        }
        try sqlite.execute("COMMIT")
    }

    /// The first column of every row of a query with text arguments.
    func uris(_ sql: String, _ arguments: [String]) throws -> [String] {
        let statement = try sqlite.statement(sql)
        for (index, argument) in arguments.enumerated() { RawSQLite.bind(statement, Int32(index + 1), argument) }
        var uris: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { uris.append(RawSQLite.text(statement, 0)) }
        return uris
    }

    func text(_ match: String) throws -> [String] {
        let statement = try sqlite.statement("""
            SELECT p.uri, bm25(places_fts, 10.0, 6.0, 2.0, 1.0) AS score FROM places_fts JOIN places p ON p.id = places_fts.rowid
            WHERE places_fts MATCH ? ORDER BY score LIMIT 20
            """)
        RawSQLite.bind(statement, 1, match)
        var uris: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { uris.append(RawSQLite.text(statement, 0)) }
        return uris
    }

    /// Rows in a lat/lon box (no antimeridian handling), with exact coordinates.
    private func rows(minLat: Double, maxLat: Double, minLon: Double, maxLon: Double) throws -> [(String, Double, Double)] {
        let statement = try sqlite.statement("""
            SELECT p.uri, p.latitude, p.longitude FROM places_geo g JOIN places p ON p.id = g.id
            WHERE g.max_lat >= ? AND g.min_lat <= ? AND g.max_lon >= ? AND g.min_lon <= ?
            """)
        for (index, value) in [minLat, maxLat, minLon, maxLon].enumerated() { sqlite3_bind_double(statement, Int32(index + 1), value) }
        var rows: [(String, Double, Double)] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append((RawSQLite.text(statement, 0), sqlite3_column_double(statement, 1), sqlite3_column_double(statement, 2)))
        }
        return rows
    }

    static func haversine(_ a: Coordinate, _ latitude: Double, _ longitude: Double) -> Double {
        let φ1 = a.latitude * .pi / 180, φ2 = latitude * .pi / 180, Δφ = φ2 - φ1, Δλ = (longitude - a.longitude) * .pi / 180
        let h = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * 6_371_008.8 * atan2(sqrt(min(1, h)), sqrt(max(0, 1 - h)))
    }

    private static func top(_ rows: [(String, Double)], _ k: Int) -> [String] {
        rows.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(k).map(\.0)
    }

    func box(_ box: BoundingBox?) throws -> [String] {
        guard let box else { return [] }
        let center = box.center
        let rows = try rows(minLat: box.minLatitude, maxLat: box.maxLatitude, minLon: box.minLongitude, maxLon: box.maxLongitude)
            .filter { box.contains(latitude: $0.1, longitude: $0.2) }
        return Self.top(rows.map { ($0.0, Self.haversine(center, $0.1, $0.2)) }, 20)
    }

    func radius(center: Coordinate?, radius: Double, limit: Int = 20) throws -> [String] {
        guard let center else { return [] }
        let dLat = radius / 111_195, dLon = dLat / max(0.01, cos(center.latitude * .pi / 180))
        let rows = try rows(minLat: center.latitude - dLat, maxLat: center.latitude + dLat, minLon: center.longitude - dLon, maxLon: center.longitude + dLon)
        return Self.top(rows.map { ($0.0, Self.haversine(center, $0.1, $0.2)) }.filter { $0.1 <= radius }, limit)
    }

    /// Nearest by scanning every row: what a plain table offers.
    func nearest(center: Coordinate?, k: Int) throws -> [String] {
        guard let center else { return [] }
        let statement = try sqlite.statement("SELECT uri, latitude, longitude FROM places")
        var best: [(String, Double)] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            let distance = Self.haversine(center, sqlite3_column_double(statement, 1), sqlite3_column_double(statement, 2))
            if best.count < k || distance <= best[best.count - 1].1 {
                best.append((RawSQLite.text(statement, 0), distance))
                best.sort { ($0.1, $0.0) < ($1.1, $1.0) }
                if best.count > k { best.removeLast() }
            }
        }
        return best.map(\.0)
    }

    /// Every text match joined to its row, then the distance filter: the naive join.
    func textNear(_ match: String, center: Coordinate?, radius: Double) throws -> [String] {
        guard let center else { return [] }
        let statement = try sqlite.statement("""
            SELECT p.uri, p.latitude, p.longitude, bm25(places_fts, 10.0, 6.0, 2.0, 1.0) FROM places_fts JOIN places p ON p.id = places_fts.rowid
            WHERE places_fts MATCH ?
            """)
        RawSQLite.bind(statement, 1, match)
        var hits: [(String, Double)] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            if Self.haversine(center, sqlite3_column_double(statement, 1), sqlite3_column_double(statement, 2)) <= radius {
                hits.append((RawSQLite.text(statement, 0), sqlite3_column_double(statement, 3)))
            }
        }
        return Self.top(hits, 20)
    }
}
