#if PostgreSQL
import Foundation
import PostgresIndex
import SearchIndex
import SeededRandom
import Testing
import TestScratch

/// The same Corpus items in an SQLite index and in PostgreSQL: every search answers the same hits, in the
/// same order, with the same scores and distances.
@Suite("PostgreSQL and SQLite answer alike", .serialized, .ownThread)
struct CrossBackendTests {
    static let store = "7A1B2C3D-0000-4000-8000-00000000C0DE"

    /// The Corpus's places as items, as its configuration shows them: the name, the ASCII name as title,
    /// alternate names and the time zone as text, the country as keyword, the population as rank.
    static func corpusItems() throws -> [IndexedItem] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-dc", root.appendingPathComponent("Corpus/places.tsv.gz").path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var items: [IndexedItem] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 9, let id = Int(fields[0]), let latitude = Double(fields[3]), let longitude = Double(fields[4]) else { continue }
            let alternates = fields[8].isEmpty ? [] : fields[8].components(separatedBy: "|")
            items.append(IndexedItem(uri: "x-coredata://\(store)/Place/p\(id)", entity: "Place", displayName: fields[1], title: fields[2],
                                     text: alternates + [fields[7]], keywords: [fields[5]], latitude: latitude, longitude: longitude,
                                     rank: Double(fields[6]) ?? 0,
                                     attributes: ["population": (Double(fields[6]).map { [FilterValue.number($0)] } ?? []), "country": [.string(fields[5])],
                                                  "timeZone": [.string(fields[7])]]))
        }
        return items
    }

    /// A few items without a place, and of another entity, so that entity and place filters matter.
    static let extras: [IndexedItem] = [
        IndexedItem(uri: "x-coredata://\(store)/Note/p1", entity: "Note", displayName: "Tokyo trip", text: ["shinjuku station", "東京 旅行"]),
        IndexedItem(uri: "x-coredata://\(store)/Note/p2", entity: "Note", displayName: "Paris notes", title: "Paris", keywords: ["travel"]),
        IndexedItem(uri: "x-coredata://\(store)/Note/p3", entity: "Note", displayName: "DeviceMigrationState_FD0781A4", text: ["example.com camelCase"]),
        // Prefixes match bytes, not Characters: क is a prefix of किताब, ก of กิน.
        IndexedItem(uri: "x-coredata://\(store)/Note/p4", entity: "Note", displayName: "किताब घर", text: ["กินข้าว"]),
        // Identifier parts that repeat a word at one position.
        IndexedItem(uri: "x-coredata://\(store)/Note/p5", entity: "Note", displayName: "test_test nameName", keywords: ["test"]),
    ]

    /// Both indexes, written batch by batch with the same checkpoints.
    static func indexes(_ cluster: PostgresCluster) async throws -> (SearchIndex, PostgresIndex) {
        let items = try corpusItems() + extras
        let sqlite = try SearchIndex(path: Scratch.folder.appendingPathComponent("cross-\(UUID().uuidString).searchindex").path, mode: .readWrite(permissions: 0o600))
        let postgres = try await PostgresIndex.open(try PostgresLocation(cluster.url()), creating: true)
        let writer = try await PostgresIndexWriter.open(postgres, storeUUID: store)
        for (number, start) in stride(from: 0, to: items.count, by: 5_000).enumerated() {
            let batch = IndexBatch(upserts: Array(items[start..<min(start + 5_000, items.count)]),
                                   checkpoint: StoreCheckpoint(storeUUID: store, storePath: "/tmp/Places.sqlite", token: Int64(number + 1)))
            _ = try sqlite.apply(batch)
            _ = try await writer.apply(batch)
        }
        try await writer.optimize()  // as an export ends: the planner's statistics
        await writer.close()
        return (sqlite, postgres)
    }

    /// Queries whose answers differ, for a reason the backend has yet to mirror.
    static let knownDifferences: Set<String> = ["name"]

    static let queries: [String] = [
        "tokyo", "paris", "san", "city", "new york", "\"new york\"", "san*", "sa*", "ber*", "los angeles", "rio OR lima",
        "springfield -illinois", "zürich", "zurich", "東京", "横浜", "москва", "القاهرة", "กรุงเทพ", "europe/paris", "america",
        "saint louis", "st*", "x", "deviceMigrationState", "fd0781a4", "example", "camel", "travel", "\"los angeles\" OR \"las vegas\"",
        "-paris tokyo", "new yo*", "mexico city", "são paulo", "köln", "cologne", "asia/tokyo", "de", "o'fallon",
        "क*", "कि*", "ก*", "กิ*", "test", "name", "test_test", "back\\slash",
    ]

    /// One cluster and one pair of indexes (the Corpus and a few notes) for every check: writing them is most of the time.
    @Test("the Corpus in both: the same pages, places, dumps and statistics")
    func sameAnswers() async throws {
        try await Self.withIndexes { sqlite, postgres in
            try await text(sqlite, postgres)
            try await places(sqlite, postgres)
            try await typosFiltersAndFacets(sqlite, postgres)
            try await dump(sqlite, postgres)
        }
    }

    /// Words, phrases, prefixes, OR, exclusion, every script, pages past the first.
    func text(_ sqlite: SearchIndex, _ postgres: PostgresIndex) async throws {
        do {
            var hits = 0
            for query in Self.queries {
                for (limit, offset) in [(20, 0), (7, 5)] {
                    var request = SearchRequest(query: query, limit: limit, offset: offset)
                    request.typoTolerance = false
                    if Self.knownDifferences.contains(query) {
                        // Kept running and reported: only the pages holding the item differ.
                        await withKnownIssue("FTS5 counts a part repeated at one position (nameName: name, name) twice; the tsvector once",
                                             isIntermittent: true) {
                            hits += try await Self.compare(request, sqlite, postgres)
                        }
                    } else {
                        hits += try await Self.compare(request, sqlite, postgres)
                    }
                }
            }
            // Not a comparison of two empty answers.
            #expect(hits > 500)
            // A stranger's queries, with PostgreSQL's own tsquery syntax in them: the same hits, or the same refusal.
            let hostile = ["'", "\\", "\"", "a:*", "san & !paris", "new <-> york", "'tokyo':*", "tok' | 'x", "(", ")", "!!!", "::",
                           "\u{0}tokyo", "to\u{0}kyo", "x\u{7F}y", String(repeating: "san ", count: 80), String(repeating: "é", count: 3_000)]
            for query in hostile {
                var request = SearchRequest(query: query)
                request.typoTolerance = false
                func outcome(_ body: () async throws -> [String]) async -> Result<[String], any Error> {
                    do { return .success(try await body()) } catch { return .failure(error) }
                }
                let expected = await outcome { try await sqlite.search(request).hits.map(\.uri) }
                let found = await outcome { try await postgres.search(request).hits.map(\.uri) }
                switch (expected, found) {
                case (.success(let want), .success(let got)): #expect(got == want, "\(query.debugDescription)")
                case (.failure(let want), .failure(let got)): #expect("\(got)" == "\(want)", "\(query.debugDescription)")
                case (let want, let got): Issue.record("\(query.debugDescription): SQLite \(want), PostgreSQL \(got)")
                }
            }
            var prefix = SearchRequest(query: "san fr", limit: 10)
            (prefix.lastWordIsPrefix, prefix.typoTolerance) = (true, false)
            try await Self.compare(prefix, sqlite, postgres)
            var notes = SearchRequest(query: "tokyo", entities: ["Note"])
            notes.typoTolerance = false
            try await Self.compare(notes, sqlite, postgres)
        }
    }

    /// Radius, box (across the antimeridian too), nearest, words with a place.
    func places(_ sqlite: SearchIndex, _ postgres: PostgresIndex) async throws {
        do {
            let zurich = try Coordinate(latitude: 47.3769, longitude: 8.5417)
            let fiji = try Coordinate(latitude: -17.7134, longitude: 178.065)
            let requests: [SearchRequest] = [
                SearchRequest(near: zurich, radius: 30_000, limit: 1_000),
                SearchRequest(near: zurich, limit: 10),
                SearchRequest(near: fiji, limit: 25),
                SearchRequest(near: try Coordinate(latitude: 89.9, longitude: 0), limit: 5),
                SearchRequest(boundingBox: try BoundingBox(minLatitude: 45, minLongitude: 5, maxLatitude: 48, maxLongitude: 11), limit: 50),
                SearchRequest(boundingBox: try BoundingBox(minLatitude: -25, minLongitude: 170, maxLatitude: -10, maxLongitude: -170), limit: 50),
                SearchRequest(query: "san", near: try Coordinate(latitude: 37.77, longitude: -122.42), radius: 200_000, limit: 20),
                SearchRequest(query: "san", near: try Coordinate(latitude: 37.77, longitude: -122.42), radius: 200_000, sort: .distance, limit: 20),
                SearchRequest(query: "saint", near: try Coordinate(latitude: 45.5, longitude: -73.6), sort: .distance, limit: 10),
                SearchRequest(query: "city", near: zurich, limit: 10),
                SearchRequest(query: "ber*", boundingBox: try BoundingBox(minLatitude: 40, minLongitude: -10, maxLatitude: 60, maxLongitude: 30), limit: 30),
            ]
            var hits = 0
            for var request in requests {
                request.typoTolerance = false
                hits += try await Self.compare(request, sqlite, postgres)
            }
            #expect(hits > 200)
        }
    }

    /// Typo tolerance (expansions, pages that exact matches fill, suggestions), filters of every operator,
    /// orders by attribute and facets: the same pages, totals, facets and suggestions.
    func typosFiltersAndFacets(_ sqlite: SearchIndex, _ postgres: PostgresIndex) async throws {
        do {
            // Words of the Corpus with a random edit or two (never the first letter), as people mistype them.
            var generator = SeededGenerator(seed: 1_616)
            let names = try await sqlite.dump().map(\.displayName).filter { $0.unicodeScalars.count >= 5 && !$0.contains(" ") }
            var typed = ["zurch", "berln", "tokyoo", "londn", "saintt", "sann", "mexco", "sao pauol", "zzxqvbnm", "qqqqqqq", "parsi -tokyo"]
            for _ in 0..<20 {
                var scalars = Array((names.randomElement(using: &generator) ?? "tokyo").lowercased().unicodeScalars)
                for _ in 0..<Int.random(in: 1...2, using: &generator) where scalars.count > 2 {
                    let at = Int.random(in: 1..<scalars.count, using: &generator)
                    switch Int.random(in: 0...3, using: &generator) {
                    case 0: scalars.remove(at: at)
                    case 1: scalars.insert("e", at: at)
                    case 2: scalars[at] = "x"
                    default: if at + 1 < scalars.count { scalars.swapAt(at, at + 1) }
                    }
                }
                typed.append(String(String.UnicodeScalarView(scalars)))
            }
            var typoHits = 0, suggestions = 0
            for query in typed {
                for (limit, offset, prefix) in [(10, 0, false), (5, 3, false), (10, 0, true)] {
                    var request = SearchRequest(query: query, limit: limit, offset: offset)
                    request.lastWordIsPrefix = prefix
                    request.countsTotal = offset > 0
                    let (expected, _) = try await Self.compareResults(request, sqlite, postgres)
                    typoHits += expected.hits.filter { $0.typos > 0 }.count
                    if expected.suggestion != nil { suggestions += 1 }
                }
            }
            #expect(typoHits > 50 && suggestions > 2, "typo hits \(typoHits), suggestions \(suggestions)")
            // Filters: every operator, folding, dates as strings, nil, NOT; alone, with words, with places.
            let filters = [
                "population > 1000000", "population >= 100000 AND population < 200000", "population BETWEEN {5000, 6000}",
                "country == 'JP'", "country != 'US'", "country IN {'FR', 'DE', 'CH'}", "country ==[c] 'fr'", "country BEGINSWITH 'N'",
                "country BEGINSWITH[c] 'n'", "timeZone ENDSWITH 'Paris'", "timeZone CONTAINS[cd] 'ZURICH'", "timeZone LIKE 'Asia/T*o'",
                "timeZone LIKE[c] 'europe/?aris'", "timeZone MATCHES 'America/(New_York|Chicago)'", "country BETWEEN {'A', 'C'}",
                "population == nil", "population != nil", "NOT (country == 'US' OR country == 'CA')", "timeZone < 'Africa/Z'",
                "country == 'JP' AND NOT timeZone ENDSWITH 'Tokyo'", "TRUEPREDICATE AND population > 5000000", "FALSEPREDICATE",
            ]
            let zurich = try Coordinate(latitude: 47.3769, longitude: 8.5417)
            var filtered = 0
            for filter in filters {
                var alone = SearchRequest(query: nil, limit: 25)
                alone.filter = filter
                alone.countsTotal = true
                var words = SearchRequest(query: "san", limit: 15)
                words.filter = filter
                var near = SearchRequest(near: zurich, limit: 10)
                near.filter = filter
                near.countsTotal = true
                var radius = SearchRequest(query: "berg", near: zurich, radius: 300_000, limit: 10)
                radius.filter = filter
                for request in [alone, words, near, radius] { filtered += try await Self.compareResults(request, sqlite, postgres).0.hits.count }
            }
            #expect(filtered > 300)
            // Orders by attribute (ties by URI on PostgreSQL, by index order on SQLite: compared as keys), facets.
            let attributes = Dictionary(uniqueKeysWithValues: try Self.corpusItems().map { ($0.uri, $0.attributes) })
            var ordered = SearchRequest(query: nil, limit: 30)
            ordered.filter = "country == 'CH'"
            for sort in ["population:desc", "population", "timeZone:desc", "country"] {
                let name = String(sort.split(separator: ":")[0])
                ordered.sortAttribute = AttributeOrder(name: name, descending: sort.hasSuffix(":desc"))
                let key = { (uri: String) in attributes[uri]?[name].map { "\($0)" } ?? "missing" }
                try await Self.compareResults(ordered, sqlite, postgres, tiesByKey: key)
                var words = SearchRequest(query: "san", limit: 20)
                words.sortAttribute = ordered.sortAttribute
                words.facets = ["country", "population"]
                try await Self.compareResults(words, sqlite, postgres, tiesByKey: key)
            }
            var faceted = SearchRequest(query: "saint", limit: 5)
            faceted.facets = ["country", "timeZone"]
            try await Self.compareResults(faceted, sqlite, postgres)
            var nearFacets = SearchRequest(near: zurich, limit: 5)
            nearFacets.facets = ["country"]
            try await Self.compareResults(nearFacets, sqlite, postgres)
            // A misspelt attribute is the same error on both.
            var unknown = SearchRequest(query: nil)
            unknown.filter = "populaton > 5"
            let sqliteError = await WriterTests.failure { _ = try sqlite.search(unknown) }
            let postgresError = await WriterTests.failure { _ = try await postgres.search(unknown) }
            for error in [sqliteError, postgresError] {
                #expect(error.map { "\($0)" }?.contains("no item has attribute 'populaton'; the index has country, population, timeZone") == true, "\(String(describing: error))")
            }
        }
    }

    /// Compares whole results: the page (as ``compare(_:_:_:sourceLocation:)``), the total, the facets and
    /// the suggestion. With `tiesByKey` (an order by attribute), hits with equal values may come in another
    /// order: each page is compared as its sequence of values and its set of hits.
    @discardableResult
    static func compareResults(_ request: SearchRequest, _ sqlite: SearchIndex, _ postgres: PostgresIndex, tiesByKey: ((String) -> String)? = nil,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws -> (SearchResults, SearchResults) {
        let expected = try await sqlite.search(request)
        let found = try await postgres.search(request)
        let label = "\(request.query ?? "-") where \(request.filter ?? "-") near \(request.near.map(String.init(describing:)) ?? "-") sort \(request.sortAttribute?.name ?? "-")"
        if let key = tiesByKey {
            // The same values in the same order; the same hits, but for those tied with the page's last.
            #expect(found.hits.map { key($0.uri) } == expected.hits.map { key($0.uri) }, "\(label)", sourceLocation: sourceLocation)
            let last = expected.hits.last.map { key($0.uri) }
            #expect(Set(found.hits.map(\.uri).filter { key($0) != last }) == Set(expected.hits.map(\.uri).filter { key($0) != last }), "\(label)", sourceLocation: sourceLocation)
        } else {
            _ = try await compare(request, sqlite, postgres, sourceLocation: sourceLocation)
        }
        #expect(found.total == expected.total, "\(label): total", sourceLocation: sourceLocation)
        #expect(found.facets == expected.facets, "\(label): facets", sourceLocation: sourceLocation)
        #expect(found.suggestion == expected.suggestion, "\(label): suggestion", sourceLocation: sourceLocation)
        return (expected, found)
    }

    /// Dumps and statistics.
    func dump(_ sqlite: SearchIndex, _ postgres: PostgresIndex) async throws {
        do {
            let expected = try await sqlite.dump()
            let found = try await postgres.dump()
            #expect(found.count == expected.count)
            #expect(found == expected)
            // A batch that deletes a URI it also upserts, upserts one URI twice, and carries an impossible place:
            // both backends keep the same thing.
            var odd = IndexBatch(upserts: [
                IndexedItem(uri: "x-coredata://\(Self.store)/Note/p7", entity: "Note", displayName: "first"),
                IndexedItem(uri: "x-coredata://\(Self.store)/Note/p7", entity: "Note", displayName: "second"),
                IndexedItem(uri: "x-coredata://\(Self.store)/Note/p8", entity: "Note", displayName: "gone"),
                IndexedItem(uri: "x-coredata://\(Self.store)/Note/p9", entity: "Note", displayName: "nowhere", latitude: 95, longitude: 10),
            ], deletes: ["x-coredata://\(Self.store)/Note/p8"], checkpoint: StoreCheckpoint(storeUUID: Self.store, storePath: "/tmp/Places.sqlite", token: 8))
            // …and starts a walk of a related object's dependents, which status counts.
            let country = "x-coredata://\(Self.store)/Country/p1"
            odd.deferredDependents = [country: "{}"]
            _ = try sqlite.apply(odd)
            let writer = try await PostgresIndexWriter.open(postgres, storeUUID: Self.store)
            _ = try await writer.apply(odd)
            await writer.close()
            #expect(try await postgres.dump(entities: ["Note"]) == (try await sqlite.dump(entities: ["Note"])))
            let statistics = try await postgres.statistics()
            #expect(statistics.itemsPerEntity == (try sqlite.statistics()).itemsPerEntity)
            #expect(statistics.locatedItems == (try sqlite.statistics()).locatedItems)
            #expect(statistics.checkpoints.map(\.token) == [8])
            #expect(statistics.deferredDependents == [Self.store: 1])
            #expect(statistics.deferredDependents == (try sqlite.statistics()).deferredDependents)
            // The walk's last page ends it on both.
            var last = IndexBatch(checkpoint: StoreCheckpoint(storeUUID: Self.store, storePath: "/tmp/Places.sqlite", token: 9))
            last.finishedDeferredDependents = [country]
            _ = try sqlite.apply(last)
            let finisher = try await PostgresIndexWriter.open(postgres, storeUUID: Self.store)
            _ = try await finisher.apply(last)
            await finisher.close()
            #expect(try await postgres.statistics().deferredDependents == [:])
            #expect(try sqlite.statistics().deferredDependents == [:])
            // A page that exact matches fill needs no typos, on either backend.
            #expect(try await postgres.search(SearchRequest(query: "saint", limit: 5)).hits.map(\.uri) == (try await sqlite.search(SearchRequest(query: "saint", limit: 5))).hits.map(\.uri))
        }
    }

    /// Compares one search's pages; returns the hits.
    @discardableResult
    static func compare(_ request: SearchRequest, _ sqlite: SearchIndex, _ postgres: PostgresIndex, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        let expected = try await sqlite.search(request).hits
        let found = try await postgres.search(request).hits
        let label = "\(request.query ?? "-") near \(request.near.map(String.init(describing:)) ?? "-") limit \(request.limit) offset \(request.offset)"
        #expect(found.map(\.uri) == expected.map(\.uri), "\(label)", sourceLocation: sourceLocation)
        for (hit, want) in zip(found, expected) where hit.uri == want.uri {
            #expect(abs(hit.score - want.score) <= 1e-9 * max(1, abs(want.score)), "\(label): \(hit.uri) score \(hit.score) ≠ \(want.score)", sourceLocation: sourceLocation)
            #expect(hit.distance == want.distance, "\(label): \(hit.uri) distance", sourceLocation: sourceLocation)
            #expect(hit.typos == want.typos && hit.displayName == want.displayName && hit.latitude == want.latitude, "\(label)", sourceLocation: sourceLocation)
        }
        return expected.count
    }

    /// Runs a test with both indexes, or skips it (CI fails it instead) when PostgreSQL is not installed.
    static func withIndexes(_ body: (SearchIndex, PostgresIndex) async throws -> Void) async throws {
        if let reason = PostgresCluster.unavailability {
            if PostgresCluster.required { Issue.record("SEARCHLIGHT_REQUIRE_POSTGRES=1, but \(reason)") }
            else { print("skipped: \(reason)") }
            return
        }
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let (sqlite, postgres) = try await indexes(cluster)
        do { try await body(sqlite, postgres) } catch { await postgres.close(); throw error }
        await postgres.close()
    }
}
#endif
