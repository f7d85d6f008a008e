import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing

/// A placed list answers a word, prefix or phrase within a wide region only with the page full scoring gives:
/// over circles and boxes of every width (across the antimeridian and over a pole), filters, pages, twins that
/// tie, lists stale after writes and listed again.
@Suite("Placed lists")
struct PlacedListTests {
    /// Places in four dense clusters (one of them astride the antimeridian), some anywhere, some nowhere; every
    /// tenth item has a twin (the same name, rank and tag, a few meters away) that ties with it.
    static func items(_ keys: Range<Int>, seed: UInt64) -> [IndexedItem] {
        var generator = SeededGenerator(seed: seed)
        let clusters: [(Double, Double)] = [(48, 2), (-23, -46), (35, 139), (-17, 179)]
        var items: [IndexedItem] = []
        for var item in TermLeadersTests.items(keys, seed: seed) {
            var latitude: Double?, longitude: Double?
            switch Int.random(in: 0..<20, using: &generator) {
            case 0: break  // no place
            case 1...4:
                latitude = Double.random(in: -89.9...89.9, using: &generator)
                longitude = Double.random(in: -180...180, using: &generator)
            default:
                let (lat, lon) = clusters.randomElement(using: &generator) ?? (0, 0)
                latitude = lat + Double.random(in: -12...12, using: &generator)
                var wrapped = lon + Double.random(in: -12...12, using: &generator)
                if wrapped > 180 { wrapped -= 360 }
                longitude = wrapped
            }
            item.latitude = latitude
            item.longitude = longitude
            item.attributes = ["tag": [.number(Double(Int.random(in: 0..<4, using: &generator)))]]
            items.append(item)
            if items.count % 10 == 0 {
                var twin = item
                twin.uri += "t"
                twin.latitude = latitude.map { $0 + 1e-5 }
                items.append(twin)
            }
        }
        return items
    }

    /// Circles of every width around the clusters and elsewhere, a point alone (every placed item, by relevance),
    /// and boxes, one across the antimeridian.
    static let regions: [(near: (Double, Double), radius: Double?, box: (Double, Double, Double, Double)?)] = [
        ((48, 2), 100_000, nil), ((48, 2), 600_000, nil), ((48, 2), 1_500_000, nil), ((-23, -46), 2_000_000, nil), ((-23, -46), nil, nil),
        ((35, 139), 900_000, nil), ((-17, 179.5), 1_200_000, nil), ((-17, -179.5), 3_000_000, nil), ((0, 0), 4_000_000, nil),
        ((85, 0), 1_000_000, nil), ((10, -120), 8_000_000, nil), ((48, 2), 15_000_000, nil),
        ((40, 0), nil, (36, -10, 60, 14)), ((-20, 0), nil, (-30, 170, -5, -170)), ((0, 0), 2_500_000, (-10, -10, 10, 10)),
    ]

    static let queries = TermLeadersTests.words + ["Saint"] + TermLeadersTests.prefixes + TermLeadersTests.phrases

    /// Every page of every query within every region, from the lists and from full scoring: the same hits,
    /// scores and distances. Returns how many pages placed lists answered.
    @discardableResult
    static func expectSamePages(_ index: SearchIndex, _ context: String, filters: [String?] = [nil, "tag == 1"]) throws -> Int {
        var answered = 0
        for query in queries {
            for region in regions {
                for filter in filters {
                    for (limit, offset) in [(1, 0), (20, 0), (20, 7), (64, 0), (10, 250)] {
                        var request = SearchRequest(query: query, limit: limit, offset: offset)
                        request.near = try Coordinate(latitude: region.near.0, longitude: region.near.1)
                        request.radius = region.radius
                        request.boundingBox = try region.box.map { try BoundingBox(minLatitude: $0.0, minLongitude: $0.1, maxLatitude: $0.2, maxLongitude: $0.3) }
                        request.filter = filter
                        request.typoTolerance = false
                        let listed = try index.search(request)
                        request.usesTermLeaders = false
                        let full = try index.search(request)
                        #expect(listed.hits.map(describe) == full.hits.map(describe),
                                "\(context): \(query) within \(region) filter \(filter ?? "-") limit \(limit) offset \(offset)")
                        if listed.plan == .placedList { answered += 1 }
                    }
                }
            }
        }
        return answered
    }

    static func describe(_ hit: SearchHit) -> String { "\(hit.uri) \(hit.score) \(hit.distance ?? -1)" }

    @Test("a placed list answers wide regions exactly as full scoring, ties and filters included, and leaves the rest to the other plans")
    func pagesEqualFullScoring() throws {
        let index = try TypoTiersTests.newIndex("placed-lists", items: Self.items(0..<3_000, seed: 41), listingPrefixes: true)
        let answered = try Self.expectSamePages(index, "listed")
        // Not vacuous: most wide regions' pages come from the lists.
        #expect(answered > 1_000, "\(answered) pages answered by placed lists")
        // Every listed key has its placed list, best first, each entry scoring above the threshold.
        try index.read { db in
            let keys = try String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE stale = 0")
            #expect(!keys.isEmpty)
            for key in keys {
                let list = try #require(try TermLeaders.placedListing(key: key, db: db), "\(key)")
                var scores: [Float] = []
                #expect(try list.walk(db: db) { scores.append($0.score); return nil } == nil, "\(key): damaged")
                #expect(scores == scores.sorted(by: >), "\(key)")
                if let threshold = list.drift.threshold, let last = scores.last { #expect(Double(last) > threshold, "\(key)") }
            }
        }
    }

    @Test("a list that leaves rows off answers from its tail, exactly as full scoring, where its best rows lie elsewhere")
    func tailsEqualFullScoring() throws {
        let items = Self.items(0..<3_000, seed: 41)
        let index = try TypoTiersTests.newIndex("placed-lists-tails", items: items)
        // Lists a few dozen rows deep: most rows of every key are left off, as a frequent prefix's are.
        let shallow = TermLeaders.PlacedDepths(word: 40, prefix: 24, mostTailRows: 100_000)
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true, depths: shallow) }
        // Every list that leaves rows off has a tail, and the two hold every placed row of the key once.
        try index.read { db in
            let keys = try String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE stale = 0")
            #expect(keys.count > 20)
            var tails = 0
            defer { #expect(tails > 20, "\(tails) of \(keys.count) lists with a tail") }
            for key in keys {
                let list = try #require(try TermLeaders.placedListing(key: key, db: db), "\(key)")
                #expect(list.isComplete, "\(key)")
                #expect((list.tail != nil) == (list.drift.threshold != nil), "\(key)")
                var ids: [Int64] = []
                #expect(try list.walk(db: db) { ids.append($0.id); return nil } == nil, "\(key)")
                var tail: [Int64] = []
                var misplaced = 0
                if list.tail != nil { tails += 1 }
                #expect(try list.walkTail(db: db) { id, latitude, longitude in
                    tail.append(id)
                    let place = try Row.fetchOne(db, sql: "SELECT latitude, longitude FROM items WHERE id = ?", arguments: [id])
                    let (exactLatitude, exactLongitude): (Double, Double) = (place?[0] ?? .nan, place?[1] ?? .nan)
                    if !(abs(latitude - exactLatitude) <= TermLeaders.PlacedTail.latitudeError + 1e-12
                         && abs(longitude - exactLongitude) <= TermLeaders.PlacedTail.longitudeError + 1e-12) { misplaced += 1 }
                    return true
                } == (list.tail != nil), "\(key)")
                // A walk that stops is told apart from a damaged tail.
                if list.tail ?? 0 > 1 { #expect(try list.walkTail(db: db) { _, _, _ in false } == nil, "\(key)") }
                #expect(misplaced == 0, "\(key)")
                #expect(tail == tail.sorted(), "\(key)")
                let expression = TermLeaders.expression(of: key)
                let placed = try Int64.fetchAll(db, sql: """
                    SELECT i.id FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ? AND i.latitude IS NOT NULL
                    """, arguments: [expression])
                #expect((ids + tail).sorted() == placed.sorted(), "\(key)")
            }
        }
        let answered = try Self.expectSamePages(index, "tails")
        // Not vacuous: without tails the same lists answer far fewer pages.
        let withoutTails = try Self.withoutTails(index, shallow) { try Self.expectSamePages(index, $0) }
        #expect(answered > withoutTails + 2_000, "\(answered) pages with tails, \(withoutTails) without")
    }

    /// Lists `index` again as deep as `depths` without tails, and runs `answered` (told the context): how
    /// many pages lists answer when they cannot read the rows they leave off.
    static func withoutTails(_ index: SearchIndex, _ depths: TermLeaders.PlacedDepths, _ answered: (String) throws -> Int) throws -> Int {
        var cut = depths
        cut.mostTailRows = 0
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true, depths: cut) }
        return try answered("no tails")
    }

    @Test("a word under a filter, anywhere, is answered from its placed list's rows read under the filter, exactly as full scoring")
    func filteredListPages() throws {
        // Every item placed (a list then holds every row of its key); countries from common to rare.
        var generator = SeededGenerator(seed: 61)
        let items = Self.items(0..<3_000, seed: 61).map { item in
            var item = item
            if item.latitude == nil {
                item.latitude = Double.random(in: -60...60, using: &generator)
                item.longitude = Double.random(in: -180...180, using: &generator)
            }
            let draw = Int.random(in: 0..<200, using: &generator)
            item.attributes["country"] = [.string(draw < 120 ? "A" : draw < 180 ? "B" : draw < 199 ? "C" : "D")]
            return item
        }
        let index = try TypoTiersTests.newIndex("placed-lists-filtered", items: items, listingPrefixes: true)
        let filters = ["country == \"A\"", "country == \"C\"", "country == \"D\"", "tag == 1", "country == \"A\" AND tag == 2", "tag > 1",
                       "country != \"A\"", "country IN {\"B\", \"C\"}"]
        func expectSame(_ context: String) throws -> Int {
            var answered = 0
            for query in Self.queries {
                for filter in filters {
                    for (limit, offset) in [(1, 0), (20, 0), (7, 5), (64, 0)] {
                        var request = SearchRequest(query: query, limit: limit, offset: offset)
                        request.filter = filter
                        request.typoTolerance = false
                        // Twice: the second search may check rows against items the first one read and kept.
                        for round in 0..<2 {
                            let listed = try index.search(request)
                            var full = request
                            full.usesTermLeaders = false
                            #expect(listed.hits.map(Self.describe) == (try index.search(full)).hits.map(Self.describe),
                                    "\(context): \(query) filter \(filter) limit \(limit) offset \(offset) round \(round)")
                        }
                        if limit == 20, try index.explain(request).statements.contains(where: { $0.arguments.contains("each listed row the filter may keep") }) {
                            answered += 1
                        }
                    }
                }
            }
            return answered
        }
        let complete = try expectSame("complete lists")
        #expect(complete > 60, "\(complete) pages of 20 from the lists")
        // Lists a few dozen rows deep, the rest in their tails.
        try index.write { db in
            try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true, depths: .init(word: 40, prefix: 24, mostTailRows: 100_000))
        }
        let shallow = try expectSame("tails")
        #expect(shallow > 40, "\(shallow) pages of 20 from the lists")
    }

    @Test("rows in tails a few hundred meters inside and outside a region's edges (circles, boxes, the antimeridian, a pole) are found or left as full scoring does")
    func tailMargins() throws {
        // The point at `meters` from a center along a meridian (north) or a parallel (east), by bisection on the
        // index's own distance.
        func point(from center: (Double, Double), meters: Double, north: Bool) -> (Double, Double) {
            var (low, high) = (0.0, north ? 5.0 : 60.0)
            for _ in 0..<80 {
                let middle = (low + high) / 2
                let distance = north ? GeoMath.distance(center.0, center.1, center.0 + middle, center.1)
                                     : GeoMath.distance(center.0, center.1, center.0, center.1 + middle)
                if distance < meters { low = middle } else { high = middle }
            }
            let step = (low + high) / 2
            var longitude = north ? center.1 : center.1 + step
            if longitude > 180 { longitude -= 360 }
            return north ? (center.0 + step, center.1) : (center.0, longitude)
        }
        let circles: [((Double, Double), Double)] = [((48, 2), 100_000), ((-17, 179.9), 30_000), ((89.5, 0), 50_000)]
        let boxes: [(Double, Double, Double, Double)] = [(40, -10, 50, 10), (-30, 170, -5, -170)]
        var places: [(Double, Double)] = []
        let offsets = [-600.0, -400, -300, -150, -20, 0, 20, 150, 300, 400, 600]
        for (center, radius) in circles {
            for offset in offsets { for north in [true, false] { places.append(point(from: center, meters: radius + offset, north: north)) } }
        }
        for box in boxes {
            for offset in [-0.006, -0.004, -0.002, -0.0005, 0, 0.0005, 0.002, 0.004, 0.006] {
                places += [(box.2 + offset, 0.5 * (box.1 + box.3)), (box.0 + offset, box.1 + 1), (box.0 + 1, box.1 + offset), (box.0 + 1, box.3 + offset)]
            }
        }
        places += [(-20, 180), (-20, -180), (-20, 179.9999), (-20, -179.9999), (89.99, 0), (89.99, 180), (90, 0)]
        // Four times over (a narrow circle is walked when it holds 64 places or more), with ranks so that scores
        // differ; twins tie.
        let items = (0..<(4 * places.count)).map { key in
            let (latitude, longitude) = places[key % places.count]
            return IndexedItem(uri: "x-coredata://STORE-A/Place/p\(key)", entity: "Place", displayName: key % 3 == 0 ? "edge north" : "edge",
                               latitude: min(max(latitude, -90), 90), longitude: longitude > 180 ? longitude - 360 : longitude, rank: Double(key % 7))
        }
        let index = try TypoTiersTests.newIndex("placed-lists-margins", items: items)
        try index.write { db in
            try TermLeaders.refresh(db, minimumDocuments: 20, listingPrefixes: true, depths: .init(word: 2, prefix: 2, mostTailRows: 100_000))
        }
        var fromLists = 0, others: [String] = []
        for query in ["edge", "edg*", "north"] {
            var requests: [SearchRequest] = []
            for (center, radius) in circles {
                for sort in [SearchRequest.Sort.relevance, .distance] {
                    var request = SearchRequest(query: query, near: try Coordinate(latitude: center.0, longitude: center.1), radius: radius, sort: sort, limit: 200)
                    request.typoTolerance = false
                    requests.append(request)
                }
            }
            for box in boxes {
                var request = SearchRequest(query: query, boundingBox: try BoundingBox(minLatitude: box.0, minLongitude: box.1, maxLatitude: box.2, maxLongitude: box.3),
                                            limit: 200)
                request.typoTolerance = false
                requests.append(request)
            }
            for request in requests {
                let listed = try index.search(request)
                var full = request
                full.usesTermLeaders = false
                let expected = try index.search(full)
                #expect(listed.hits.map(Self.describe) == expected.hits.map(Self.describe), "\(query) \(request.near.map { "\($0)" } ?? "") \(request.radius ?? 0)")
                #expect(!expected.hits.isEmpty, "\(query): not vacuous")
                if listed.plan == .placedList || listed.plan == .placedRows { fromLists += 1 } else { others.append("\(query) \(request.near.map { "\($0.latitude)" } ?? "box") \(request.sort.map { "\($0)" } ?? "") \(listed.plan) \(expected.hits.count)") }
            }
        }
        #expect(fromLists > 10, "\(fromLists) pages from the lists and their tails; \(others)")
    }

    @Test("a tail's entries decode to their ids and places within the rounding; damaged bytes never do")
    func tailEncoding() throws {
        var generator = SeededGenerator(seed: 57)
        for round in 0..<200 {
            var id: Int64 = 0
            var rows: [(id: Int64, latitude: Double, longitude: Double)] = (0..<Int.random(in: 0..<300, using: &generator)).map { _ in
                // Gaps of every varint length, up to the largest ids.
                id += Int64.random(in: 1...(round % 4 == 3 ? Int64.max >> 12 : 1 << (7 * Int.random(in: 1...4, using: &generator))), using: &generator)
                let latitude = [-90, 90, 0].randomElement(using: &generator).map { round % 2 == 0 ? Double($0) : Double.random(in: -90...90, using: &generator) } ?? 0
                return (id, latitude, Double.random(in: -180...180, using: &generator))
            }
            let expected = rows
            rows.shuffle(using: &generator)
            let bytes = TermLeaders.PlacedTail.encode(&rows)
            var decoded: [(id: Int64, latitude: Double, longitude: Double)] = []
            #expect(bytes.withUnsafeBytes { TermLeaders.PlacedTail.scan($0, count: Int64(expected.count)) { decoded.append(($0, $1, $2)); return true } == true })
            #expect(decoded.map(\.id) == expected.map(\.id))
            for (row, entry) in zip(expected, decoded) {
                #expect(abs(row.latitude - entry.latitude) <= TermLeaders.PlacedTail.latitudeError + 1e-12)
                #expect(abs(row.longitude - entry.longitude) <= TermLeaders.PlacedTail.longitudeError + 1e-12)
                #expect(GeoMath.distance(row.latitude, row.longitude, entry.latitude, entry.longitude) <= PlacedRegion.Rounding.tail.meters)
            }
            // Cut short, or told another count: damaged.
            if !bytes.isEmpty {
                let cut = bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator))
                #expect(!cut.withUnsafeBytes { TermLeaders.PlacedTail.scan($0, count: Int64(expected.count)) { _, _, _ in true } == true })
            }
            #expect(!bytes.withUnsafeBytes { TermLeaders.PlacedTail.scan($0, count: Int64(expected.count) + 1) { _, _, _ in true } == true })
            // Any byte changed: entries or damage, never a trap.
            var changed = bytes
            if !changed.isEmpty { changed[Int.random(in: 0..<changed.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator) }
            _ = changed.withUnsafeBytes { TermLeaders.PlacedTail.scan($0, count: Int64(expected.count)) { _, _, _ in true } == true }
        }
        // A place off the 16-bit scale (-32,768, which no encoding writes) is damage, as the fuzzer found.
        #expect(!Data([1, 0x00, 0x80, 0, 0]).withUnsafeBytes { TermLeaders.PlacedTail.scan($0, count: 1) { _, _, _ in true } == true })
        #expect(Data([1, 0x01, 0x80, 0xFF, 0x7F]).withUnsafeBytes { TermLeaders.PlacedTail.scan($0, count: 1) { _, _, _ in true } == true })
    }

    @Test("a narrow region is walked from a placed list when it is dense (a city), left to the R-tree when sparse, exact either way")
    func narrowDenseRegions() throws {
        // Half the places within 5 km of one point, like a city's neighbourhoods; the rest anywhere.
        var generator = SeededGenerator(seed: 47)
        let items = TermLeadersTests.items(0..<3_000, seed: 47).enumerated().map { key, item in
            var item = item
            if key % 2 == 0 {
                item.latitude = 48 + Double.random(in: -0.04...0.04, using: &generator)
                item.longitude = 2 + Double.random(in: -0.06...0.06, using: &generator)
            } else {
                item.latitude = Double.random(in: -80...80, using: &generator)
                item.longitude = Double.random(in: -180...180, using: &generator)
            }
            return item
        }
        let index = try TypoTiersTests.newIndex("placed-lists-narrow", items: items, listingPrefixes: true)
        let regions: [(Double, Double, Double)] = [(48, 2, 20_000), (48.02, 2.03, 3_000), (48, 2, 200), (10, 100, 20_000), (-30, -60, 50_000)]
        var plans: [String: Set<SearchPlan>] = [:]
        for query in Self.queries {
            for (latitude, longitude, radius) in regions {
                for (limit, offset) in [(1, 0), (20, 7), (64, 0)] {
                    var request = SearchRequest(query: query, near: try Coordinate(latitude: latitude, longitude: longitude), radius: radius,
                                                limit: limit, offset: offset)
                    request.typoTolerance = false
                    let listed = try index.search(request)
                    request.usesTermLeaders = false
                    let full = try index.search(request)
                    #expect(listed.hits.map(Self.describe) == full.hits.map(Self.describe), "\(query) within \(radius) m of \(latitude),\(longitude)")
                    plans["\(latitude),\(longitude),\(radius)", default: []].insert(listed.plan)
                }
            }
        }
        // The city's 20 km and 3 km circles hold hundreds of places: walked from the lists. A circle of 200 m
        // holds a handful, and the far ones none: the R-tree's plans, without a walk.
        #expect(plans["48.0,2.0,20000.0"]?.contains(.placedList) == true)
        #expect(plans["48.02,2.03,3000.0"]?.contains(.placedList) == true)
        for key in ["48.0,2.0,200.0", "10.0,100.0,20000.0", "-30.0,-60.0,50000.0"] { #expect(plans[key]?.contains(.placedList) == false, "\(key)") }
    }

    @Test("writes take placed lists out of use with their leader lists; listed again, they answer again")
    func staleAndListedAgain() throws {
        let items = Self.items(0..<2_000, seed: 43)
        let index = try TypoTiersTests.newIndex("placed-lists-stale", items: items, listingPrefixes: true)
        // Renames and moves (rows whose scores and places change), deletes, and new rows.
        var generator = SeededGenerator(seed: 44)
        var edited: [IndexedItem] = []
        for var item in items.shuffled(using: &generator).prefix(300) {
            item.displayName = TermLeadersTests.words.shuffled(using: &generator).prefix(2).joined(separator: " ")
            item.latitude = item.latitude.map { -$0 }
            edited.append(item)
        }
        let added = Self.items(5_000..<5_400, seed: 45)
        try index.apply(IndexBatch(prepared: (edited + added).map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(2)))
        try index.apply(IndexBatch(deletes: items.prefix(200).map(\.uri), checkpoint: IndexFixtures.checkpoint(3)))
        try Self.expectSamePages(index, "stale", filters: [nil])
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true) }
        #expect(try Self.expectSamePages(index, "listed again", filters: [nil]) > 500)
    }

    @Test("an index whose lists have no placed rows (schema 14) gets them when migrated, and answers as full scoring")
    func listedByTheMigration() throws {
        let index = try TypoTiersTests.newIndex("placed-lists-migrated", items: Self.items(0..<1_500, seed: 47), listingPrefixes: true)
        let keys = try index.read { db in try Set(String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE stale = 0")) }
        try index.write { db in try db.execute(sql: "DELETE FROM leader_places") }
        #expect(try Self.expectSamePages(index, "no placed rows", filters: [nil]) == 0)
        try index.write { db in try TermLeaders.listPlaces(db) }
        let listed = try index.read { db in try Set(String.fetchAll(db, sql: "SELECT term FROM leader_places")) }
        #expect(listed == keys)
        #expect(try Self.expectSamePages(index, "migrated", filters: [nil]) > 300)
    }

    @Test("an index of schema 17 (lists that leave rows off, no tails) lists them again when opened for writing")
    func tailsListedByTheMigration() throws {
        let index = try TypoTiersTests.newIndex("placed-lists-tails-migrated", items: Self.items(0..<1_500, seed: 59))
        // What schema 17 had: lists cut short without tails.
        try index.write { db in
            try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: true, depths: .init(word: 16, prefix: 16, mostTailRows: 0))
        }
        let answeredBefore = try Self.expectSamePages(index, "cut", filters: [nil])
        try index.write { db in
            try db.execute(sql: "DROP TABLE leader_place_tails")
            try db.execute(sql: """
                DROP INDEX item_attributes_by_number; DROP INDEX item_attributes_by_text;
                CREATE INDEX item_attributes_by_number ON item_attributes (name, number);
                CREATE INDEX item_attributes_by_text ON item_attributes (name, text);
                """)
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v18'")
            try db.execute(sql: "PRAGMA user_version = 17")
        }
        let path = index.path
        let cut = try index.read { db in
            try Set(String.fetchAll(db, sql: "SELECT term FROM leader_places WHERE chunk = 0 AND threshold IS NOT NULL"))
        }
        #expect(cut.count > 20)
        #expect(throws: SearchIndexError.needsUpgrade(path: path)) { try SearchIndex(path: path, mode: .readOnly) }
        let reopened = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        // Listed again, as deep as an index lists: every row of these few thousand places.
        try reopened.read { db in
            #expect(try Int.fetchOne(db, sql: "PRAGMA user_version") == SearchIndex.schemaVersion)
            // The value indexes cover a comparison's ids.
            for index in ["item_attributes_by_number", "item_attributes_by_text"] {
                #expect(try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [index]).suffix(2) == ["kind", "item_id"])
            }
            for key in cut {
                let list = try #require(try TermLeaders.placedListing(key: key, db: db), "\(key)")
                #expect(list.isComplete, "\(key)")
            }
        }
        let answeredAfter = try Self.expectSamePages(reopened, "migrated", filters: [nil])
        #expect(answeredAfter > answeredBefore + 100, "\(answeredBefore) pages answered before, \(answeredAfter) after")
    }

    @Test("a place moved under the same text takes its words' placed lists out of use in the same write")
    func placeMovedAlone() throws {
        let items = Self.items(0..<2_000, seed: 51)
        let index = try TypoTiersTests.newIndex("placed-lists-moved", items: items, listingPrefixes: true)
        // Every item holding `jose` far from Paris moves next to it, its text and rank as they were; and
        // an item without a place gets one there.
        let far = items.filter { item in
            item.displayName.split(separator: " ").contains("jose") && item.latitude.map { abs($0 - 48) > 20 } == true
        }
        #expect(far.count > 20)
        let moved = far.map { item in
            var item = item
            item.latitude = 48.5
            item.longitude = 2.5
            return item
        }
        var placed = try #require(items.first { $0.latitude == nil })
        placed.latitude = 47.5
        placed.longitude = 1.5
        try index.apply(IndexBatch(prepared: (moved + [placed]).map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(2)))
        let stale = try TermLeadersTests.staleTerms(index)
        #expect(stale.isSuperset(of: ["jose", "j*", "jo*", "jos*", "jose*"]))
        var request = SearchRequest(query: "jose", near: try Coordinate(latitude: 48, longitude: 2), radius: 600_000, limit: 64)
        request.typoTolerance = false
        let listed = try index.search(request)
        #expect(listed.plan != .placedList)
        request.usesTermLeaders = false
        #expect(listed.hits.map(Self.describe) == (try index.search(request)).hits.map(Self.describe))
        #expect(Set(listed.hits.map(\.uri)).isSuperset(of: moved.prefix(20).map(\.uri)) || listed.hits.count == 64)
    }

    @Test("rows the term vectors cannot score leave the page to the other plans")
    func vectorsMissing() throws {
        let index = try TypoTiersTests.newIndex("placed-lists-no-vectors", items: Self.items(0..<1_500, seed: 53), listingPrefixes: true)
        // An index whose items have no vectors (a damaged one): every row read is scored by FTS5, one statement
        // each, until the limit stops the walk.
        try index.write { db in try db.execute(sql: "UPDATE items SET term_vector = NULL") }
        for query in ["san", "s*", "\"san juan\""] {
            var request = SearchRequest(query: query, near: try Coordinate(latitude: 48, longitude: 2), radius: 3_000_000, limit: 64)
            request.typoTolerance = false
            let listed = try index.search(request)
            request.usesTermLeaders = false
            #expect(listed.hits.map(Self.describe) == (try index.search(request)).hits.map(Self.describe), "\(query)")
        }
    }

    @Test("a damaged placed list is not used")
    func damagedList() throws {
        let index = try TypoTiersTests.newIndex("placed-lists-damaged", items: Self.items(0..<1_500, seed: 49))
        try index.write { db in
            try db.execute(sql: "UPDATE leader_places SET entries = substr(entries, 1, length(entries) - 3) WHERE term = 'san'")
            try db.execute(sql: "UPDATE leader_places SET threshold = 1e999 WHERE term = 'city'")
            // Entries out of order: the worst first.
            let entries = try #require(try Data.fetchOne(db, sql: "SELECT entries FROM leader_places WHERE term = 'maria' AND chunk = 0"))
            let size = TermLeaders.PlacedEntry.size
            let reversed = stride(from: entries.count - size, through: 0, by: -size).reduce(into: Data()) { $0 += entries[$1..<$1 + size] }
            try db.execute(sql: "UPDATE leader_places SET entries = ? WHERE term = 'maria' AND chunk = 0", arguments: [reversed])
        }
        // A chunk missing, seen by a walk that reaches it (a region near the pole holds few rows of any list).
        var polar = SearchRequest(query: "new", near: try Coordinate(latitude: 85, longitude: 0), radius: 1_000_000)
        polar.typoTolerance = false
        #expect(try index.search(polar).plan == .placedList)
        #expect(try index.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM leader_places WHERE term = 'new'") ?? 0 } > 1)
        try index.write { db in try db.execute(sql: "DELETE FROM leader_places WHERE term = 'new' AND chunk = 1") }
        #expect(try index.search(polar).plan != .placedList)
        var request = SearchRequest(query: "san", near: try Coordinate(latitude: 48, longitude: 2), radius: 2_000_000)
        request.typoTolerance = false
        #expect(try index.search(request).plan != .placedList)
        request.query = "city"
        #expect(try index.search(request).plan != .placedList)
        request.query = "maria"
        #expect(try index.search(request).plan != .placedList)
        request.query = "jose"
        #expect(try index.search(request).plan == .placedList)
    }
}
