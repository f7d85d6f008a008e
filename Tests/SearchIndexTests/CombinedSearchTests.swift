import Foundation
@testable import SearchIndex
import Testing
import SeededRandom
import TestScratch

@Suite("Words and places together")
struct CombinedSearchTests {
    struct Place { var uri: String; var name: String; var entity: String; var latitude: Double; var longitude: Double }

    static let fixture: (SearchIndex, [Place]) = {
        var generator = SeededGenerator(state: 5)
        let common = ["san", "new", "port", "lake"], rare = ["zephyr", "quokka", "yurt"]
        var places: [Place] = []
        for key in 0..<3000 {
            var words = [common[key % common.count]]
            if key % 97 == 0 { words.append(rare[key % rare.count]) }
            if key % 5 == 0 { words.append("river") }
            let latitude = asin(Double.random(in: -1...1, using: &generator)) * 180 / .pi
            let longitude = key % 10 == 0 ? Double.random(in: 178...180, using: &generator) : Double.random(in: -180...180, using: &generator)
            places.append(Place(uri: String(format: "x-coredata://S/%@/p%05d", key % 3 == 0 ? "Lake" : "Town", key),
                                name: words.joined(separator: " "), entity: key % 3 == 0 ? "Lake" : "Town", latitude: latitude, longitude: longitude))
        }
        let path = Scratch.folder.appendingPathComponent("combined-\(UUID().uuidString).searchindex").path
        // Built once for the suite; a failure here stops every test with this trap.
        let index = try! SearchIndex(path: path, mode: .readWrite(permissions: nil))
        _ = try! index.apply(IndexBatch(upserts: places.map {
            IndexedItem(uri: $0.uri, entity: $0.entity, displayName: $0.name, latitude: $0.latitude, longitude: $0.longitude)
        }, checkpoint: StoreCheckpoint(storeUUID: "S", storePath: "/s", token: 1)))
        return (index, places)
    }()

    func truth(_ words: [String], near: (Double, Double)?, radius: Double?, entity: String? = nil) -> Set<String> {
        Set(Self.fixture.1.filter { place in
            let tokens = Set(place.name.split(separator: " ").map(String.init))
            guard words.allSatisfy(tokens.contains) else { return false }
            if let entity, place.entity != entity { return false }
            if let near, let radius, SpatialTests.bruteDistance((place.latitude, place.longitude), near) > radius { return false }
            return true
        }.map(\.uri))
    }

    @Test("every plan returns the brute-force answer for rare and common words, small and large circles",
          arguments: [SearchPlan.textThenPlace, .placeThenText, .intersection, nil])
    func plans(plan: SearchPlan?) throws {
        let (index, _) = Self.fixture
        for words in [["san"], ["zephyr"], ["river"], ["lake", "river"], ["quokka", "lake"]] {
            for (latitude, longitude, radius) in [(0.0, 179.5, 3_000_000.0), (45.0, 10.0, 500_000.0), (89.0, 0.0, 2_000_000.0), (-30.0, -60.0, 9_000_000.0)] {
                var request = SearchRequest(query: words.joined(separator: " "), near: try Coordinate(latitude: latitude, longitude: longitude),
                                            radius: radius, limit: 10_000)
                request.forcedPlan = plan
                let result = try index.search(request)
                if let plan { #expect(result.plan == plan) }
                #expect(Set(result.hits.map(\.uri)) == truth(words, near: (latitude, longitude), radius: radius), "\(words) \(latitude),\(longitude) \(radius) \(result.plan)")
                #expect(result.hits.map(\.score) == result.hits.map(\.score).sorted(by: >))
                // Nearest-first with words: the same k as brute force.
                request.sort = .distance
                request.radius = nil
                request.limit = 7
                let nearest = try index.search(request).hits
                let matching = truth(words, near: nil, radius: nil)
                let expected = Self.fixture.1.filter { matching.contains($0.uri) }
                    .map { ($0.uri, SpatialTests.bruteDistance(($0.latitude, $0.longitude), (latitude, longitude))) }
                    .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(7).map(\.0)
                #expect(nearest.map(\.uri) == expected, "nearest \(words) \(latitude),\(longitude)")
                // Each hit carries the score the words alone give it, whether the plan scored every match or the page.
                let alone = try index.search(SearchRequest(query: words.joined(separator: " "), limit: 10_000)).hits
                let scores = Dictionary(uniqueKeysWithValues: alone.map { ($0.uri, $0.score) })
                for hit in nearest { #expect(hit.score == scores[hit.uri], "score of \(hit.uri), nearest \(words) \(String(describing: plan))") }
            }
        }
    }

    @Test("a page of the intersection plan is the circle's best, however much better the rows just outside it")
    func circleCornersNeverRaiseTheBar() throws {
        let path = Scratch.folder.appendingPathComponent("corners-\(UUID().uuidString).searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        // Inside 100 km of (0, 0): modest places. In the corners of the circle's bounding box, 130 km out:
        // the most important places there are, which the R-tree's box holds and the circle does not.
        var items: [IndexedItem] = []
        for key in 0..<40 {
            let angle = Double(key) / 40 * 2 * .pi
            items.append(IndexedItem(uri: String(format: "x-coredata://C/Place/in%02d", key), entity: "Place", displayName: "harbor",
                                     latitude: 0.5 * sin(angle), longitude: 0.5 * cos(angle), rank: Double(key % 3)))
            let corner = (key % 4 < 2 ? 0.85 : -0.85, key % 2 == 0 ? 0.85 : -0.85)
            items.append(IndexedItem(uri: String(format: "x-coredata://C/Place/out%02d", key), entity: "Place", displayName: "harbor",
                                     latitude: corner.0 + Double(key) * 1e-4, longitude: corner.1, rank: 1e6))
        }
        try index.apply(IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "C", storePath: "/c", token: 1)))
        let center = try Coordinate(latitude: 0, longitude: 0)
        for (limit, offset) in [(1, 0), (5, 0), (5, 3), (20, 0)] {
            var request = SearchRequest(query: "harbor", near: center, radius: 100_000, limit: limit, offset: offset)
            request.forcedPlan = .intersection
            let pruned = try index.search(request).hits
            request.forcedPlan = .textThenPlace
            let full = try index.search(request).hits
            #expect(pruned.map(\.uri) == full.map(\.uri), "limit \(limit) offset \(offset)")
            // The best inside: rank 2, then 1, then 0, each by URI.
            let inside = items.filter { $0.uri.contains("/in") }.sorted { ($0.rank, $1.uri) > ($1.rank, $0.uri) }.map(\.uri)
            #expect(pruned.map(\.uri) == Array(inside.dropFirst(offset).prefix(limit)), "limit \(limit) offset \(offset)")
        }
    }

    @Test("items written region by region: the intersection scans each run of row ids apart, and answers as the other plans")
    func clusteredRowIDs() throws {
        let path = Scratch.folder.appendingPathComponent("runs-\(UUID().uuidString).searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        // Six regions written one after another, 800 items each, so each region's row ids form a run; most
        // items hold `harbor` (a dense doclist, worth skipping between runs), some `harbour`, one in 50 `pier`.
        var generator = SeededGenerator(seed: 81)
        var items: [IndexedItem] = []
        // The first region and the last side by side, the four written between them far away.
        let positions: [(Double, Double)] = [(0, 0), (50, 100), (-50, -100), (60, -60), (-40, 120), (0, 3)]
        for region in 0..<6 {
            for key in 0..<800 {
                let word = key % 50 == 0 ? "pier" : key % 7 == 0 ? "harbour" : "harbor"
                items.append(IndexedItem(uri: "x-coredata://R/Place/r\(region)k\(key)", entity: "Place", displayName: "\(word) \(key % 13)",
                                         latitude: positions[region].0 + Double.random(in: -1...1, using: &generator),
                                         longitude: positions[region].1 + Double.random(in: -1...1, using: &generator),
                                         rank: Double(Int.random(in: 0...3, using: &generator) * 1_000)))
            }
        }
        try index.apply(IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "R", storePath: "/r", token: 1)))
        // One circle over the first region and the last: two runs of row ids, 3,200 apart.
        let center = try Coordinate(latitude: 0, longitude: 1.5)
        var runs = 0
        for query in ["harbor", "harbour", "pier", "harbor OR pier", "harbor -pier"] {
            for (limit, offset) in [(5, 0), (20, 0), (20, 30), (10_000, 0)] {
                var request = SearchRequest(query: query, near: center, radius: 400_000, limit: limit, offset: offset)
                request.forcedPlan = .intersection
                let intersection = try index.search(request).hits.map { "\($0.uri) \($0.score)" }
                runs = max(runs, try index.explain(request).statements.filter { $0.sql.contains("searchlight_in_ids") }.count)
                request.forcedPlan = .textThenPlace
                #expect(intersection == (try index.search(request).hits.map { "\($0.uri) \($0.score)" }), "\(query) limit \(limit) offset \(offset)")
            }
        }
        #expect(runs == 2, "scans of the densest word: \(runs)")
    }

    @Test("row-id ranges cover every id once, in order, split only at gaps wider than a scan's start")
    func rowIDRangesProperty() {
        var generator = SeededGenerator(seed: 82)
        for _ in 0..<300 {
            var ids = Set<Int64>()
            for _ in 0..<Int.random(in: 1...60, using: &generator) {
                let start = Int64.random(in: 1...1_000_000, using: &generator)
                for offset in 0..<Int64.random(in: 1...30, using: &generator) { ids.insert(start + offset * Int64.random(in: 1...40, using: &generator)) }
            }
            let sorted = ids.sorted()
            let densities: [Double] = [0, 0.001, 0.05, 0.4, 1, 3]
            let density: Double = densities.randomElement(using: &generator) ?? 1
            let splits = Bool.random(using: &generator)
            let ranges = Search.rowIDRanges(sorted, entriesPerRow: density, splits: splits)
            #expect(sorted.allSatisfy { id in ranges.filter { $0.contains(id) }.count == 1 })
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound })
            #expect(ranges.first?.lowerBound == sorted.first && ranges.last?.upperBound == sorted.last)
            let gap: Double = density > 0 && splits ? Search.scanStartEntries / density : .infinity
            // Between ranges: a wide gap; inside one: none.
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { Double($1.lowerBound - $0.upperBound) > gap })
            #expect(zip(sorted, sorted.dropFirst()).allSatisfy { a, b in Double(b - a) > gap || ranges.contains { $0.contains(a) && $0.contains(b) } })
        }
        #expect(Search.rowIDRanges([], entriesPerRow: 1, splits: true).isEmpty)
    }

    @Test("ties break by the URI's bytes in every plan, as SQL orders them, even between canonically equivalent URIs")
    func tiesByBytes() throws {
        let path = Scratch.folder.appendingPathComponent("bytes-\(UUID().uuidString).searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        // The same text to Swift's `<` up to the key, in two normalizations: é precomposed sorts after
        // e + U+0301 by bytes, and before it by `<`, which compares `p1` with `p2`.
        let uris = ["x-coredata://B/Caf\u{E9}/p1", "x-coredata://B/Cafe\u{301}/p2"]
        try index.apply(IndexBatch(upserts: uris.map {
            IndexedItem(uri: $0, entity: "Place", displayName: "harbor", latitude: 10, longitude: 10)
        }, checkpoint: StoreCheckpoint(storeUUID: "B", storePath: "/b", token: 1)))
        let expected = uris.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        #expect(expected.first == uris[1])
        let center = try Coordinate(latitude: 10, longitude: 10)
        for plan in [SearchPlan.textThenPlace, .placeThenText, .intersection, nil] {
            var words = SearchRequest(query: "harbor", near: center, radius: 1_000, limit: 1)
            words.forcedPlan = plan
            #expect(try index.search(words).hits.map(\.uri) == [expected[0]], "\(String(describing: plan))")
        }
        #expect(try index.search(SearchRequest(query: "harbor", limit: 1)).hits.map(\.uri) == [expected[0]])
        #expect(try index.search(SearchRequest(near: center, limit: 1)).hits.map(\.uri) == [expected[0]])
        #expect(try index.search(SearchRequest(near: center, limit: 2)).hits.map(\.uri) == expected)
    }

    @Test("every plan gives the same page for prefixes, typos, OR, boxes and entity filters (300 random requests)")
    func plansAgreeOnEveryShape() throws {
        let (index, _) = Self.fixture
        var generator = SeededGenerator(state: 77)
        let queries = ["sa*", "po*", "zeph*", "quokk", "lake OR yurt", "river -san", "new river", "rivr", "l*", "yurt*"]
        for round in 0..<300 {
            let center = try Coordinate(latitude: Double.random(in: -80...80, using: &generator), longitude: Double.random(in: -180...180, using: &generator))
            var request = SearchRequest(query: queries[round % queries.count], near: center, limit: [5, 50, 5_000][round % 3])
            switch round % 4 {
            case 0: request.radius = [50_000.0, 800_000, 5_000_000][round / 4 % 3]
            case 1:
                let half = Double.random(in: 1...40, using: &generator)
                request.boundingBox = try BoundingBox(minLatitude: max(-90, center.latitude - half), minLongitude: max(-180, center.longitude - half),
                                                      maxLatitude: min(90, center.latitude + half), maxLongitude: min(180, center.longitude + half))
                request.near = nil
            case 2:
                request.radius = 2_000_000
                request.sort = .distance
            default:
                request.sort = .distance
            }
            if round % 5 == 0 { request.entities = ["Lake"] }
            let chosen = try index.search(request)
            for plan in [SearchPlan.textThenPlace, .placeThenText, .intersection] {
                var forced = request
                forced.forcedPlan = plan
                let result = try index.search(forced)
                #expect(result.hits.map(\.uri) == chosen.hits.map(\.uri), "\(plan) vs \(chosen.plan): \(request)")
                #expect(result.hits.map(\.score) == chosen.hits.map(\.score), "\(plan) vs \(chosen.plan): \(request)")
                #expect(result.hits.map(\.typos) == chosen.hits.map(\.typos))
            }
        }
    }

    @Test("words nearest-first without a radius give their total, and any limit, without overflowing the plan's estimates")
    func nearestFirstTotals() throws {
        let (index, _) = Self.fixture
        for words in [["san"], ["zephyr"], ["lake", "river"]] {
            var request = SearchRequest(query: words.joined(separator: " "), near: try Coordinate(latitude: 10, longitude: -170), sort: .distance, limit: 5)
            request.countsTotal = true
            let results = try index.search(request)
            #expect(results.total == truth(words, near: nil, radius: nil).count)
            #expect(try index.count(request) == results.total)
            request.limit = Int.max
            #expect(Set(try index.search(request).hits.map(\.uri)) == truth(words, near: nil, radius: nil))
        }
    }

    @Test("the planner picks by selectivity")
    func planner() throws {
        let (index, _) = Self.fixture
        let rareEverywhere = try index.search(SearchRequest(query: "zephyr", near: try Coordinate(latitude: 0, longitude: 0), radius: 15_000_000))
        #expect(rareEverywhere.plan == .textThenPlace)
        let commonNearby = try index.search(SearchRequest(query: "san", near: try Coordinate(latitude: 0, longitude: 0), radius: 300_000))
        #expect(commonNearby.plan != .textThenPlace)
        let explanation = try index.explain(SearchRequest(query: "san", near: try Coordinate(latitude: 0, longitude: 0), radius: 300_000))
        #expect(explanation.plan == commonNearby.plan)
        #expect(!explanation.statements.isEmpty && explanation.statements.allSatisfy { !$0.queryPlan.isEmpty })
        #expect(explanation.expression == "\"san\"")
    }

    @Test("entity filters, counts, stable paging")
    func filtersAndPaging() throws {
        let (index, _) = Self.fixture
        let lakes = try index.search(SearchRequest(query: "river", entities: ["Lake"], limit: 10_000)).hits
        #expect(Set(lakes.map(\.uri)) == truth(["river"], near: nil, radius: nil, entity: "Lake"))
        #expect(try index.count(SearchRequest(query: "river")) == truth(["river"], near: nil, radius: nil).count)
        #expect(try index.count(SearchRequest(query: "river", entities: ["Town"])) == truth(["river"], near: nil, radius: nil, entity: "Town").count)
        let all = try index.search(SearchRequest(query: "san", limit: 100)).hits.map(\.uri)
        var paged: [String] = []
        for offset in stride(from: 0, to: 100, by: 30) {
            paged += try index.search(SearchRequest(query: "san", limit: 30, offset: offset)).hits.map(\.uri)
        }
        #expect(Array(paged.prefix(100)) == all)
        #expect(try index.search(SearchRequest(query: "san", limit: 5, offset: 100_000)).hits.isEmpty)
    }

    @Test("rank lifts near-ties and never buries a far better text match")
    func rank() throws {
        let path = Scratch.folder.appendingPathComponent("rank-\(UUID().uuidString).searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [
            IndexedItem(uri: "u/street", entity: "Place", displayName: "Tokyo", text: ["a street"], rank: 10),
            IndexedItem(uri: "u/city", entity: "Place", displayName: "Tokyo", text: ["a city"], rank: 13_000_000),
            IndexedItem(uri: "u/mention", entity: "Place", displayName: "Yokohama", text: ["near the capital, Tokyo, by train"], rank: 30_000_000),
        ], checkpoint: StoreCheckpoint(storeUUID: "S", storePath: "/s", token: 1)))
        #expect(try index.search(SearchRequest(query: "tokyo")).hits.map(\.uri) == ["u/city", "u/street", "u/mention"])
    }
}

@Suite("Ranking")
struct RankingTests {
    @Test("a short name match beats the same word in a long list of other names")
    func perColumnNormalization() throws {
        let path = Scratch.folder.appendingPathComponent("bm25f-\(UUID().uuidString).searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        let aliases = (0..<200).map { "alias\($0)" } + ["Zurich", "Zuerich", "Zurigo"]
        try index.apply(IndexBatch(upserts: [
            IndexedItem(uri: "u/city", entity: "Place", displayName: "Zürich", text: [aliases.joined(separator: ", ")], rank: 341_730),
            IndexedItem(uri: "u/district", entity: "Place", displayName: "Zürich (Kreis 11)", text: ["Oerlikon"], rank: 70_000),
            IndexedItem(uri: "u/other", entity: "Place", displayName: "Winterthur", text: ["near Zurich"], rank: 100_000),
        ], checkpoint: StoreCheckpoint(storeUUID: "S", storePath: "/s", token: 1)))
        let hits = try index.search(SearchRequest(query: "zurich")).hits
        #expect(hits.map(\.uri) == ["u/city", "u/district", "u/other"])
    }
}
