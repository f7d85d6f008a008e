import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing

/// A one-word search with typo expansions, answered tier by tier with its expansions' leader lists, gives
/// exactly the page that scoring the word and every expansion at once gives.
@Suite("Typo tiers")
struct TypoTiersTests {
    /// Frequent words with near-misses of every frequency: `europe` in most rows beside a rare `europa`,
    /// `saint` and `sant` (one edit apart, often in the same row) beside `sint` and `siant`, long words
    /// with two-edit neighbours.
    static let vocabulary: [(word: String, weight: Int)] = [
        ("europe", 60), ("europa", 2), ("euroa", 1), ("saint", 25), ("sant", 12), ("sint", 4), ("siant", 1), ("santa", 10),
        ("sainte", 3), ("springfield", 15), ("springfeld", 2), ("sprinfield", 1), ("lake", 20), ("lakes", 6), ("laken", 1),
        ("marseille", 8), ("marseilles", 2), ("marsielle", 1), ("city", 20), ("port", 10), ("porto", 5),
    ]

    static func word(_ generator: inout SeededGenerator, from vocabulary: [(word: String, weight: Int)]) -> String {
        let total = vocabulary.reduce(0) { $0 + $1.weight }
        var pick = Int.random(in: 0..<total, using: &generator)
        for entry in vocabulary {
            if pick < entry.weight { return entry.word }
            pick -= entry.weight
        }
        return vocabulary.first?.word ?? ""
    }

    static func items(_ keys: Range<Int>, seed: UInt64, vocabulary: [(word: String, weight: Int)] = vocabulary) -> [IndexedItem] {
        var generator = SeededGenerator(seed: seed)
        func word(_ generator: inout SeededGenerator) -> String { Self.word(&generator, from: vocabulary) }
        return keys.map { key in
            var name = (0..<Int.random(in: 1...3, using: &generator)).map { _ in word(&generator) }.joined(separator: " ")
            // A word in a few rows, one edit from `europe`: its pages are mostly that tier's.
            if key % 500 == 7 { name = "eurppe " + name }
            let alternates = (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                (0..<Int.random(in: 1...2, using: &generator)).map { _ in word(&generator) }.joined(separator: " ")
            }
            return IndexedItem(uri: "x-coredata://STORE-T/Place/p\(key)", entity: "Place", displayName: name, text: alternates,
                               rank: [0, 0, 3, 700, 40_000, 2_000_000].randomElement(using: &generator) ?? 0)
        }
    }

    static func newIndex(_ name: String, items: [IndexedItem], minimumDocuments: Int = 100, listingPrefixes: Bool = false) throws -> SearchIndex {
        let index = try PreparedItemTests.newIndex(name)
        try index.apply(IndexBatch(prepared: items.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: minimumDocuments, listingPrefixes: listingPrefixes) }
        return index
    }

    /// Typed words that expand: a rare word beside a frequent neighbour, a typo of nothing typed, a frequent
    /// word itself, two-edit words, a prefix; alternatives and exclusions.
    static let queries = ["europa", "europ", "Europa", "euroa", "siant", "saint", "sainte", "sant", "santa", "sinat", "lakes", "laken",
                          "springfeld", "sprinfield", "sprngfield", "marsielle", "marseilles", "porto", "eurpoe", "saint*", "europ*", "eurppe",
                          // Alternatives and exclusions: the tiers of one group, the excluded terms left out of each.
                          "eurppe -city", "siant -lake", "sprngfield -lake -city", "eurppe OR sinat", "siant OR sainte", "sainx OR saitn",
                          "eurppe OR \"saint lake\"", "europ* -porto",
                          // Alternatives as typed, frequent and rare: the exact tier from the lists too.
                          "europe OR eurppe", "city OR lake", "saint OR sant -city", "city OR \"new york\""]

    /// Every page of every query, tier by tier and scored whole: the same hits, the same scores. Returns how
    /// many pages the tiers answered.
    @discardableResult
    static func expectSamePages(_ index: SearchIndex, _ context: String) throws -> Int {
        var answered = 0
        for query in queries {
            for (limit, offset) in [(1, 0), (5, 0), (20, 0), (20, 3), (7, 40), (64, 0), (30, 150), (10, 990)] {
                var request = SearchRequest(query: query, limit: limit, offset: offset)
                // Sorted by distance without a place: every distance is missing, and relevance orders the page.
                if offset == 3 { request.sort = .distance }
                let tiered = try index.search(request).hits.map { "\($0.uri) \($0.score) \($0.typos)" }
                request.usesTermLeaders = false
                let whole = try index.search(request).hits.map { "\($0.uri) \($0.score) \($0.typos)" }
                #expect(tiered == whole, "\(context): \(query) limit \(limit) offset \(offset)")
                request.usesTermLeaders = true
                if try index.explain(request).statements.contains(where: { $0.sql == Search.tierSQL }) { answered += 1 }
            }
        }
        return answered
    }

    @Test("each page, tier by tier with the expansions' lists, is the page full scoring gives")
    func pagesEqualFullScoring() throws {
        let index = try Self.newIndex("tiers-pages", items: Self.items(0..<3_000, seed: 71))
        let listed = try index.read { db in try Set(String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE threshold IS NOT NULL")) }
        #expect(listed.isSuperset(of: ["europe", "saint", "sant", "springfield", "lake"]), "listed: \(listed.sorted())")
        let answered = try Self.expectSamePages(index, "fresh lists")
        #expect(answered > 60, "the tiers answered \(answered) pages")
        // `eurppe` is rare and `europe` frequent: its page comes from europe's list, without scoring europe's rows.
        let explained = try index.explain(SearchRequest(query: "eurppe", limit: 20))
        #expect(explained.statements.contains { $0.sql == TermLeaders.listSQL })
        #expect(!explained.statements.contains { $0.arguments.description.contains("0:0 0:1 0:1") }, "the word and its expansions scored at once")
    }

    /// Half the places in two dense clusters, the rest anywhere; every tenth item has a twin at the same place
    /// (a distance tie), whose URI comes first though it is read after, and every fifteenth one a few meters off.
    static func placedRowsItems() -> [IndexedItem] {
        var generator = SeededGenerator(seed: 77)
        var items: [IndexedItem] = []
        for var item in Self.items(0..<3_000, seed: 78) {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: break  // no place
            case 1...4:
                item.latitude = Double.random(in: -70...70, using: &generator)
                item.longitude = Double.random(in: -180...180, using: &generator)
            default:
                let (latitude, longitude) = Bool.random(using: &generator) ? (48.0, 2.0) : (-33.0, 151.0)
                item.latitude = latitude + Double.random(in: -0.5...0.5, using: &generator)
                item.longitude = longitude + Double.random(in: -0.5...0.5, using: &generator)
            }
            // A filter that leaves a third of the rows: nearest first, most rows read are left out.
            item.attributes = ["tag": [.number(Double(items.count % 3))]]
            items.append(item)
            if items.count % 10 == 0 || items.count % 15 == 0 {
                var twin = item
                if items.count % 15 == 0 {
                    twin.uri += "t"
                    twin.latitude = item.latitude.map { $0 + 2e-5 }
                } else {
                    twin.uri = twin.uri.replacingOccurrences(of: "/p", with: "/a")
                }
                items.append(twin)
            }
        }
        return items
    }

    /// Every page of the expanded words within regions, wide and narrow, or nearest first, with and without
    /// filters, from the lists and from full scoring: the same hits. Returns how many pages placed rows answered.
    static func expectSamePlacedPages(_ index: SearchIndex, _ context: String) throws -> Int {
        let regions: [(near: (Double, Double)?, radius: Double?, box: (Double, Double, Double, Double)?, sort: SearchRequest.Sort?)] = [
            ((48, 2), 20_000, nil, nil), ((48.2, 2.1), 5_000, nil, .distance), ((-33, 151), 60_000, nil, nil), ((0, 0), 3_000_000, nil, nil),
            ((48, 2), nil, nil, .distance), ((10, 100), nil, nil, .distance), ((-33, 151), 200_000, nil, .distance),
            (nil, nil, (47, 1, 49, 3), nil), (nil, nil, (-40, 140, -30, 160), .distance), ((30, 30), 9_000_000, nil, .relevance),
        ]
        var placedRows = 0
        for query in Self.queries + ["city", "saint*"] {
            for region in regions {
                for (limit, offset, filter) in [(1, 0, nil), (20, 0, nil), (20, 7, "tag == 1"), (64, 0, nil), (30, 0, "tag == 2")] {
                    var request = SearchRequest(query: query, limit: limit, offset: offset)
                    request.filter = filter
                    request.near = try region.near.map { try Coordinate(latitude: $0.0, longitude: $0.1) }
                    request.radius = region.radius
                    request.boundingBox = try region.box.map { try BoundingBox(minLatitude: $0.0, minLongitude: $0.1, maxLatitude: $0.2, maxLongitude: $0.3) }
                    request.sort = region.sort
                    let listed = try index.search(request)
                    request.usesTermLeaders = false
                    let full = try index.search(request)
                    #expect(listed.hits.map { "\($0.uri) \($0.score) \($0.typos) \($0.distance ?? -1)" }
                            == full.hits.map { "\($0.uri) \($0.score) \($0.typos) \($0.distance ?? -1)" },
                            "\(context): \(query) within \(region) limit \(limit) offset \(offset) filter \(filter ?? "-")")
                    if listed.plan == .placedRows { placedRows += 1 }
                }
            }
        }
        return placedRows
    }

    @Test("within a region or nearest first, the rows of a word and its expansions from their complete placed lists are the page full scoring gives")
    func placedRowsEqualFullScoring() throws {
        let index = try Self.newIndex("tiers-placed-rows", items: Self.placedRowsItems(), listingPrefixes: true)
        let placedRows = try Self.expectSamePlacedPages(index, "complete lists")
        // Not vacuous: most expanded words' regions come from their rows.
        #expect(placedRows > 400, "\(placedRows) pages from placed rows")

        // Lists that leave rows off (as a word's of more than 65,536 rows does), cut to their best ten with a true
        // threshold: never taken for all of a word's rows.
        try index.write { db in
            for key in try String.fetchAll(db, sql: "SELECT term FROM leader_places WHERE chunk = 0 AND count > 10") {
                let entries = try #require(try Data.fetchOne(db, sql: "SELECT entries FROM leader_places WHERE term = ? AND chunk = 0", arguments: [key]))
                let size = TermLeaders.PlacedEntry.size
                let threshold = entries.withUnsafeBytes { TermLeaders.PlacedEntry.read($0, at: 10).score }
                try db.execute(sql: "DELETE FROM leader_places WHERE term = ? AND chunk > 0", arguments: [key])
                try db.execute(sql: "UPDATE leader_places SET entries = ?, count = 10, threshold = ? WHERE term = ? AND chunk = 0",
                               arguments: [entries.prefix(10 * size), Double(threshold), key])
            }
        }
        for query in ["saint", "sainte", "siant", "city", "lakes"] {
            for sort in [SearchRequest.Sort.relevance, .distance] {
                var request = SearchRequest(query: query, near: try Coordinate(latitude: 48, longitude: 2), radius: 60_000, limit: 30)
                request.sort = sort
                let listed = try index.search(request).hits.map { "\($0.uri) \($0.score) \($0.distance ?? -1)" }
                request.usesTermLeaders = false
                #expect(listed == (try index.search(request).hits.map { "\($0.uri) \($0.score) \($0.distance ?? -1)" }), "\(query) by \(sort), lists cut")
            }
        }
    }

    @Test("lists that leave rows off give the region's rows with their tails, the page full scoring gives")
    func placedRowsFromTails() throws {
        let index = try Self.newIndex("tiers-placed-tails", items: Self.placedRowsItems())
        let shallow = TermLeaders.PlacedDepths(word: 30, prefix: 20, mostTailRows: 100_000)
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true, depths: shallow) }
        #expect(try index.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM leader_place_tails") ?? 0 } > 20)
        let placedRows = try Self.expectSamePlacedPages(index, "tails")
        // Not vacuous: without their tails, the same lists give far fewer pages.
        let withoutTails = try PlacedListTests.withoutTails(index, shallow) { try Self.expectSamePlacedPages(index, $0) }
        #expect(placedRows > withoutTails + 300, "\(placedRows) pages from placed rows with tails, \(withoutTails) without")
    }

    @Test("with a place, every plan scores with the lists' row counts exactly as counting the rows")
    func countedRowsScoreAsCounting() throws {
        var generator = SeededGenerator(seed: 75)
        let items = Self.items(0..<2_000, seed: 76).map { item in
            var placed = item
            placed.latitude = Double.random(in: -60...60, using: &generator)
            placed.longitude = Double.random(in: -179...179, using: &generator)
            return placed
        }
        let index = try Self.newIndex("tiers-places", items: items)
        var compared = 0
        for query in Self.queries + ["city", "lake", "saint*", "springfield OR lake", "europe -city"] {
            for plan in [SearchPlan.intersection, .placeThenText, .textThenPlace] {
                var request = SearchRequest(query: query, near: try Coordinate(latitude: 10, longitude: 20), radius: 4_000_000, limit: 30)
                request.forcedPlan = plan
                let counted = try index.search(request).hits.map { "\($0.uri) \($0.score)" }
                request.usesTermLeaders = false
                let counting = try index.search(request).hits.map { "\($0.uri) \($0.score)" }
                #expect(counted == counting, "\(query) \(plan)")
                compared += counted.count
            }
        }
        #expect(compared > 1_000)
        // The intersection's ranking is handed europe's count.
        var request = SearchRequest(query: "europe", near: try Coordinate(latitude: 10, longitude: 20), radius: 4_000_000, limit: 30)
        request.forcedPlan = .intersection
        #expect(try index.explain(request).statements.contains { $0.arguments.description.contains("0:0@") })
    }

    @Test("near a point with no radius, a page (typo tiers, placed lists, or ranked in SQL) is the words' own ranking with the unplaced rows left out",
          arguments: [6, 2])
    func nearAPointTierByTier(unplacedOneIn: Int) throws {
        var generator = SeededGenerator(seed: 79)
        // One item in `unplacedOneIn` has no place; with one in two, tiers often hold too few placed rows.
        let items = Self.items(0..<3_000, seed: 80).enumerated().map { offset, item in
            var placed = item
            if offset % unplacedOneIn != 0 {
                placed.latitude = Double.random(in: -80...80, using: &generator)
                placed.longitude = Double.random(in: -180...180, using: &generator)
            }
            return placed
        }
        let placedURIs = Set(items.filter { $0.latitude != nil }.map(\.uri))
        let index = try Self.newIndex("tiers-near-\(unplacedOneIn)", items: items)
        let near = try Coordinate(latitude: 45, longitude: 7)
        var answered = 0, listed = 0
        // Typo tiers, and plain words, prefixes and phrases (placed lists, or one scan ranked in SQL).
        for query in Self.queries + ["city", "lake", "saint", "\"saint lake\"", "spr*", "lake -city"] {
            // The truth, apart from every spatial plan: the words' own ranking, every match scored, the unplaced dropped.
            var words = SearchRequest(query: query, limit: 10_000)
            words.usesTermLeaders = false
            let ranking = try index.search(words).hits.filter { placedURIs.contains($0.uri) }
            for (limit, offset) in [(1, 0), (20, 0), (20, 7), (64, 0), (10, 200)] {
                let request = SearchRequest(query: query, near: near, limit: limit, offset: offset)
                let results = try index.search(request)
                let hits = results.hits
                let expected = ranking.dropFirst(offset).prefix(limit)
                #expect(hits.map { "\($0.uri) \($0.score) \($0.typos)" } == expected.map { "\($0.uri) \($0.score) \($0.typos)" },
                        "\(query) near a point, limit \(limit) offset \(offset), one in \(unplacedOneIn) unplaced")
                #expect(hits.allSatisfy { $0.distance != nil })
                // Answered by the tiers: their statements ran, and no scan of the region's rows after them.
                let statements = try index.explain(request).statements
                if statements.contains(where: { $0.sql == Search.tierSQL }), !statements.contains(where: { $0.sql.contains("searchlight_placed") }) {
                    answered += 1
                }
                if results.plan == .placedList { listed += 1 }
            }
        }
        // Not vacuous: the tiers answer many of these pages, and placed lists some.
        #expect(answered > 40, "the tiers answered \(answered) pages")
        #expect(listed > 5, "placed lists answered \(listed) pages")
    }

    @Test("the planner estimates a listed word, or alternatives all listed, by the lists' exact counts")
    func estimatesFromLists() throws {
        let index = try Self.newIndex("tiers-estimates", items: Self.items(0..<2_000, seed: 77))
        try index.read { db in
            func count(_ expression: String) throws -> Int {
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items_fts WHERE items_fts MATCH ?", arguments: [expression]) ?? 0
            }
            for (query, expected) in [("europe", try count("europe")), ("santa", try count("santa")),
                                      ("europe OR lake", try count("europe") + count("lake"))] {
                let parsed = try QueryParser.parse(query)
                var search = Search(db: db, request: SearchRequest(query: query), parsed: parsed)
                #expect(try search.estimate(parsed) == expected, "\(query)")
            }
        }
    }

    @Test("random edits, stale and listed-again lists, every page checked against full scoring")
    func randomEdits() throws {
        var items = Self.items(0..<2_500, seed: 72)
        let index = try Self.newIndex("tiers-random", items: items)
        try TermLeadersTests.editInRounds(&items, in: index, rounds: 4, edits: 1...60, ranks: [0, 9, 90_000], seed: 73) { round, position in
            Self.items(position..<position + 1, seed: UInt64(round * 10_000 + position))[0].displayName
        } check: { round in
            try Self.expectSamePages(index, "round \(round)")
        }
    }

    @Test("for random vocabularies and ranks, the tiers' page is full scoring's")
    func randomVocabularies() throws {
        var generator = SeededGenerator(seed: 74)
        for trial in 0..<3 {
            // The same words, each with a random weight: which neighbour is frequent, listed, or rare changes.
            let vocabulary = Self.vocabulary.map { ($0.word, Int.random(in: 1...40, using: &generator)) }
            let items = Self.items(0..<Int.random(in: 1_500...2_500, using: &generator), seed: UInt64(100 + trial), vocabulary: vocabulary)
            let index = try Self.newIndex("tiers-vocabulary-\(trial)", items: items)
            try Self.expectSamePages(index, "trial \(trial)")
        }
    }

    /// Regions denser than placed rows score whole: most of 12,000 places in one cluster, `europe` in a third of them.
    static func denseItems(seed: UInt64) -> [IndexedItem] {
        var generator = SeededGenerator(seed: seed)
        return Self.items(0..<12_000, seed: seed).enumerated().map { position, item in
            var item = item
            let clustered = Int.random(in: 0..<10, using: &generator) < 8
            item.latitude = clustered ? 48 + Double.random(in: -0.4...0.4, using: &generator) : Double.random(in: -60...60, using: &generator)
            item.longitude = clustered ? 2 + Double.random(in: -0.6...0.6, using: &generator) : Double.random(in: -180...180, using: &generator)
            item.attributes = ["tag": [.number(Double(position % 3))]]
            return item
        }
    }

    @Test("within a dense region, tiers searched apart and a frequent alternative from its list give the page full scoring gives")
    func denseRegionsEqualFullScoring() throws {
        let index = try Self.newIndex("tiers-dense", items: Self.denseItems(seed: 79))
        let regions: [(near: (Double, Double)?, radius: Double?, box: (Double, Double, Double, Double)?)] = [
            ((48, 2), 20_000, nil), ((48.1, 2.2), 45_000, nil), ((48, 2), 300_000, nil), (nil, nil, (47.8, 1.7, 48.3, 2.4)), ((10, 10), 5_000_000, nil),
        ]
        var plans: [SearchPlan: Int] = [:]
        for query in Self.queries + ["euroa OR europe", "sainte OR saint", "europe OR europa -city", "eurppe OR europe OR euroa"] {
            for region in regions {
                // `tag == 1` keeps 4,000 items, few enough to score the words among them; `tag <= 1` keeps 8,000.
                for (limit, offset, filter) in [(1, 0, nil), (20, 0, nil), (20, 7, "tag == 1"), (20, 3, "tag <= 1"), (64, 0, nil), (10, 30, "tag != 2")] {
                    var request = SearchRequest(query: query, limit: limit, offset: offset)
                    request.filter = filter
                    request.near = try region.near.map { try Coordinate(latitude: $0.0, longitude: $0.1) }
                    request.radius = region.radius
                    request.boundingBox = try region.box.map { try BoundingBox(minLatitude: $0.0, minLongitude: $0.1, maxLatitude: $0.2, maxLongitude: $0.3) }
                    let apart = try index.search(request)
                    plans[apart.plan, default: 0] += 1
                    request.usesTermLeaders = false
                    let whole = try index.search(request)
                    #expect(apart.hits.map { "\($0.uri) \($0.score) \($0.typos) \($0.distance ?? -1)" }
                            == whole.hits.map { "\($0.uri) \($0.score) \($0.typos) \($0.distance ?? -1)" },
                            "\(query) within \(region) limit \(limit) offset \(offset) filter \(filter ?? "-")")
                }
            }
        }
        // Not vacuous: both plans answered many pages.
        #expect(plans[.typoTiers, default: 0] > 80 && plans[.frequentAlternative, default: 0] > 50, "\(plans)")
        // `Europa` in the cluster: its tier of one edit (`euroa`, `europe`) taken apart, `europe` from its placed list.
        let explained = try index.explain(SearchRequest(query: "europa", near: try Coordinate(latitude: 48, longitude: 2), radius: 30_000, limit: 20))
        #expect(explained.plan == .typoTiers)
        #expect(explained.statements.contains { $0.arguments.contains("each listed row that may lie in the region") }, "\(explained.statements.map(\.arguments))")
    }

    @Test("within a dense region, a filter keeping few items has the words scored among them, not taken apart",
          arguments: ["rare == 1", "rare >= 1", "rare == 1 AND tag != 2"])
    func fewFilteredItemsScoredWhole(filter: String) throws {
        // One item in 40 is `rare`: 300 of 12,000, most in the cluster.
        let items = Self.denseItems(seed: 83).enumerated().map { position, item in
            var item = item
            item.attributes["rare"] = [.number(position % 40 == 0 ? 1 : 0)]
            return item
        }
        let index = try Self.newIndex("tiers-rare-filter", items: items)
        for (query, apart) in [("europa", SearchPlan.typoTiers), ("euroa OR europe", .frequentAlternative)] {
            var request = SearchRequest(query: query, near: try Coordinate(latitude: 48, longitude: 2), radius: 30_000, limit: 20)
            // The alternatives as typed, without expansions of their own.
            request.typoTolerance = apart == .typoTiers
            #expect(try index.explain(request).plan == apart, "\(query) unfiltered")
            // A filter keeping 8,000 items: still taken apart.
            request.filter = "tag <= 1"
            #expect(try index.explain(request).plan == apart, "\(query) under a filter keeping many")
            request.filter = filter
            let explained = try index.explain(request)
            #expect(explained.plan != apart, "\(query) under \(filter)")
            let among = try index.search(request)
            request.usesTermLeaders = false
            let whole = try index.search(request)
            #expect(!among.hits.isEmpty)
            #expect(among.hits.map { "\($0.uri) \($0.score) \($0.typos)" } == whole.hits.map { "\($0.uri) \($0.score) \($0.typos)" }, "\(query) under \(filter)")
        }
    }

    @Test("a tier's rows whose scores become equal once penalized are ordered by URI, as full scoring orders them")
    func penaltyTies() throws {
        // Two whole-value matches of `euroa`, ranks 1e12 and 1e12 + 1: their scores differ by a few ulps, and
        // once the one-edit penalty (1e7) is subtracted they are equal. The higher rank has the later URI.
        var items = [
            IndexedItem(uri: "x-coredata://STORE-T/Place/p9", entity: "Place", displayName: "euroa", latitude: 48, longitude: 2, rank: 1e12 + 1),
            IndexedItem(uri: "x-coredata://STORE-T/Place/p1", entity: "Place", displayName: "euroa", latitude: 48, longitude: 2.01, rank: 1e12),
        ]
        // Enough places around them for the region to be searched tier by tier.
        items += (10..<(10 + Search.fewestPlacesApart)).map {
            IndexedItem(uri: "x-coredata://STORE-T/Place/p\($0)", entity: "Place", displayName: "lake \($0)", latitude: 48, longitude: 2)
        }
        let index = try Self.newIndex("tiers-penalty-ties", items: items)
        var request = SearchRequest(query: "europa", near: try Coordinate(latitude: 48, longitude: 2), radius: 10_000, limit: 1)
        let bases = try index.search(SearchRequest(query: "euroa", limit: 2)).hits.map(\.score)
        #expect(bases.count == 2 && bases[0] != bases[1] && bases[0] - 1e7 == bases[1] - 1e7, "\(bases)")
        let tiered = try index.search(request)
        // Searched apart, the tie is found and the region scored whole; without the check, the tier's own order gave p9.
        #expect(try index.explain(request).plan != .typoTiers)
        request.usesTermLeaders = false
        let whole = try index.search(request)
        #expect(whole.hits.map(\.uri) == ["x-coredata://STORE-T/Place/p1"])
        #expect(tiered.hits.map { "\($0.uri) \($0.score) \($0.typos)" } == whole.hits.map { "\($0.uri) \($0.score) \($0.typos)" })
    }
}
