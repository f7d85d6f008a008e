import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing
import TestScratch

/// The nearest places picked from the R-tree's bounds (`Search+NearestFromTree`): the same pages as rows joined
/// to their items, where the boxes cannot tell the distances apart.
@Suite("Places: the nearest picked from the R-tree's bounds")
struct NearestFromTreeTests {
    static let center = (latitude: 48.137, longitude: 11.575)

    /// A point `distance` metres from `start` along `bearing` (degrees) on the sphere.
    static func destination(_ start: (latitude: Double, longitude: Double), distance: Double, bearing: Double) -> (Double, Double) {
        let δ = distance / 6_371_008.8, θ = bearing * .pi / 180, φ1 = start.latitude * .pi / 180, λ1 = start.longitude * .pi / 180
        let φ2 = asin(sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(θ))
        let λ2 = λ1 + atan2(sin(θ) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sin(φ2))
        return (φ2 * 180 / .pi, (λ2 * 180 / .pi + 540).truncatingRemainder(dividingBy: 360) - 180)
    }

    /// Places whose distances from the center differ by less than an R-tree box's rounding (about a metre):
    /// rings a millimetre, a centimetre and 30 cm apart, places sharing a spot, and scattered ones around them.
    static let fixture: (SearchIndex, [SpatialTests.Point]) = {
        var generator = SeededGenerator(state: 2026)
        var points: [(Double, Double)] = []
        for (start, step) in [(1_000.0, 0.001), (2_000, 0.01), (3_000, 0.3)] {
            for ring in 0..<40 {
                points.append(destination(center, distance: start + Double(ring) * step, bearing: Double.random(in: 0..<360, using: &generator)))
            }
        }
        for _ in 0..<30 {
            let spot = destination(center, distance: Double.random(in: 500...4_000, using: &generator), bearing: Double.random(in: 0..<360, using: &generator))
            points += Array(repeating: spot, count: 3)
        }
        for _ in 0..<600 {
            points.append(destination(center, distance: Double.random(in: 0...60_000, using: &generator), bearing: Double.random(in: 0..<360, using: &generator)))
        }
        let places = points.shuffled(using: &generator).enumerated().map { key, point in
            SpatialTests.Point(uri: String(format: "x-coredata://R/Place/p%04d", key), latitude: point.0, longitude: point.1)
        }
        let path = Scratch.folder.appendingPathComponent("nearest-tree-\(UUID().uuidString).searchindex").path
        // A fixture built once; a failure here fails every test with a clear trap message.
        let index = try! SearchIndex(path: path, mode: .readWrite(permissions: nil))
        let items = places.enumerated().map { key, place in
            IndexedItem(uri: place.uri, entity: "Place", displayName: "place", latitude: place.latitude, longitude: place.longitude,
                        attributes: ["size": [.number(Double(key % 10))]])
        }
        _ = try! index.apply(IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "R", storePath: "/r", token: 1)))
        return (index, places)
    }()

    /// The same request answered by joining every row of the region to its item: an entity filter (every place
    /// is a `Place`) keeps the search off the R-tree's bounds.
    static func joined(_ request: SearchRequest) -> SearchRequest {
        var joined = request
        joined.entities = ["Place"]
        return joined
    }

    /// Whether the search read the R-tree alone for its region, and did not read it joined after (as it does
    /// when a row's item disagrees with its box).
    static func picksFromTree(_ index: SearchIndex, _ request: SearchRequest) throws -> Bool {
        let statements = try index.explain(request).statements.map(\.sql)
        return statements.contains { $0.contains("FROM items_geo g\n") && !$0.contains("JOIN") }
            && !statements.contains { $0.contains("FROM items_geo g JOIN items i") }
    }

    @Test("a point's distance lies within its R-tree box's bounds, anywhere: poles, 180°, the antipode, tiny values")
    func boundsHold() throws {
        var generator = SeededGenerator(state: 31)
        /// The box SQLite's R-tree keeps for a point: each coordinate rounded down and up to 32-bit floats.
        func box(_ latitude: Double, _ longitude: Double) -> GeoMath.Box {
            func down(_ value: Double) -> Double { let f = Float(value); return Double(f) > value ? Double(f.nextDown) : Double(f) }
            func up(_ value: Double) -> Double { let f = Float(value); return Double(f) < value ? Double(f.nextUp) : Double(f) }
            return GeoMath.Box(minLatitude: down(latitude), maxLatitude: up(latitude), minLongitude: down(longitude), maxLongitude: up(longitude))
        }
        var checked = 0
        for round in 0..<20_000 {
            let center = (asin(Double.random(in: -1...1, using: &generator)) * 180 / .pi, Double.random(in: -180...180, using: &generator))
            var point: (Double, Double)
            switch round % 5 {
            case 0:  // at or near the antipode
                let antipode = (-center.0, center.1 > 0 ? center.1 - 180 : center.1 + 180)
                point = (max(-90, min(90, antipode.0 + Double.random(in: -1e-5...1e-5, using: &generator))), antipode.1)
            case 1: point = (Double.random(in: 89.99...90, using: &generator) * (Bool.random(using: &generator) ? 1 : -1), Double.random(in: -180...180, using: &generator))
            case 2: point = (Double.random(in: -90...90, using: &generator), Bool.random(using: &generator) ? 180 : Double.random(in: -180 ... -179.999, using: &generator))
            case 3: point = (Double.random(in: -1e-6...1e-6, using: &generator), Double.random(in: -1e-6...1e-6, using: &generator))
            default: point = (asin(Double.random(in: -1...1, using: &generator)) * 180 / .pi, Double.random(in: -180...180, using: &generator))
            }
            let truth = GeoMath.distance(center.0, center.1, point.0, point.1)
            let (distance, error) = GeoMath.distanceBounds(from: try Coordinate(latitude: center.0, longitude: center.1), to: box(point.0, point.1))
            #expect(abs(truth - distance) <= error, "\(point) from \(center): \(truth) against \(distance) ± \(error)")
            checked += 1
        }
        #expect(checked == 20_000)
    }

    @Test("pages by distance within a radius equal the rows joined and brute force, at the edge and among near-ties")
    func pages() throws {
        let (index, places) = Self.fixture
        let center = try Coordinate(latitude: Self.center.latitude, longitude: Self.center.longitude)
        let measured = places.map { ($0.uri, GeoMath.distance(Self.center.latitude, Self.center.longitude, $0.latitude, $0.longitude)) }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        // Radii at a place's own distance, a millimetre either side, inside the rings and past everything.
        var radii: [Double] = [1_000.0195, 2_000.2, 3_005, 10_000, 100_000]
        for index in [3, 50, 151, 240] { radii += [measured[index].1, measured[index].1 - 0.001, measured[index].1 + 0.001] }
        var checked = 0
        for radius in radii {
            for (offset, limit) in [(0, 1), (0, 20), (7, 13), (0, 57), (40, 20), (100, 30)] {
                let request = SearchRequest(near: center, radius: radius, limit: limit, offset: offset)
                let hits = try index.search(request).hits
                #expect(try Self.picksFromTree(index, request), "radius \(radius)")
                #expect(hits.map(\.uri) == (try index.search(Self.joined(request)).hits.map(\.uri)), "radius \(radius), offset \(offset), limit \(limit)")
                #expect(hits.map(\.distance) == (try index.search(Self.joined(request)).hits.map(\.distance)))
                // Brute force, by an independent formula: the same places, bar those within a micrometre of the edge.
                let within = places.filter { SpatialTests.bruteDistance(($0.latitude, $0.longitude), Self.center) <= radius }
                let expected = within.map { ($0.uri, SpatialTests.bruteDistance(($0.latitude, $0.longitude), Self.center)) }
                    .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
                let page = expected.dropFirst(offset).prefix(limit)
                if !places.contains(where: { abs(SpatialTests.bruteDistance(($0.latitude, $0.longitude), Self.center) - radius) < 1e-6 }) {
                    #expect(hits.count == page.count, "radius \(radius), offset \(offset)")
                }
                for (hit, truth) in zip(hits, page) { #expect(abs((hit.distance ?? -1) - truth.1) < 1e-6, "\(hit.uri) against \(truth.0)") }
                checked += hits.count
            }
        }
        #expect(checked > 1_000)
        // Nearest with no radius, through growing circles, and under an attribute filter checked on the R-tree's rows.
        for limit in [1, 10, 45, 200] {
            let request = SearchRequest(near: center, limit: limit)
            #expect(try index.search(request).hits.map(\.uri) == Array(measured.prefix(limit).map(\.0)), "nearest \(limit)")
            var filtered = request
            filtered.filter = "size >= 7"
            let hits = try index.search(filtered).hits.map(\.uri)
            #expect(try Self.picksFromTree(index, filtered))
            #expect(hits == (try index.search(Self.joined(filtered)).hits.map(\.uri)))
            let keys = Dictionary(uniqueKeysWithValues: places.enumerated().map { ($1.uri, $0) })
            #expect(hits == Array(measured.filter { (keys[$0.0] ?? 0) % 10 >= 7 }.prefix(limit).map(\.0)), "nearest \(limit), filtered")
        }
    }

    @Test("pages of boxes whose edges pass within a box's rounding of places equal the rows joined and brute force")
    func boxes() throws {
        let (index, places) = Self.fixture
        var checked = 0
        // Edges a tenth of a micro-degree (about a centimetre) inside and outside places, on each side.
        let near = places.filter { GeoMath.distance(Self.center.latitude, Self.center.longitude, $0.latitude, $0.longitude) < 15_000 }
        for place in near.prefix(40) {
            for nudge in [-1e-7, 1e-7, 0] {
                for box in [try BoundingBox(minLatitude: place.latitude + nudge, minLongitude: Self.center.longitude - 0.2,
                                            maxLatitude: Self.center.latitude + 0.3, maxLongitude: Self.center.longitude + 0.2),
                            try BoundingBox(minLatitude: Self.center.latitude - 0.3, minLongitude: Self.center.longitude - 0.2,
                                            maxLatitude: Self.center.latitude + 0.3, maxLongitude: place.longitude + nudge)] {
                    let middle = (box.center.latitude, box.center.longitude)
                    let expected = places.filter { box.contains(latitude: $0.latitude, longitude: $0.longitude) }
                        .map { ($0.uri, SpatialTests.bruteDistance(($0.latitude, $0.longitude), middle)) }
                        .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
                    for (offset, limit) in [(0, 20), (9, 31)] {
                        let request = SearchRequest(boundingBox: box, limit: limit, offset: offset)
                        let hits = try index.search(request).hits.map(\.uri)
                        #expect(hits == (try index.search(Self.joined(request)).hits.map(\.uri)))
                        #expect(hits == Array(expected.dropFirst(offset).prefix(limit).map(\.0)), "box \(box)")
                        checked += hits.count
                    }
                }
            }
        }
        #expect(checked > 5_000)
        let box = try BoundingBox(minLatitude: Self.center.latitude - 0.3, minLongitude: Self.center.longitude - 0.2,
                                  maxLatitude: Self.center.latitude + 0.3, maxLongitude: Self.center.longitude + 0.2)
        #expect(try Self.picksFromTree(index, SearchRequest(boundingBox: box, limit: 20)))
    }

    @Test("small pages within random circles equal brute force, at the poles and across 180°")
    func circles() throws {
        let (index, points) = SpatialTests.fixture
        for (latitude, longitude, radius) in SpatialTests.circles {
            let center = try Coordinate(latitude: latitude, longitude: longitude)
            let expected = points.map { ($0.uri, SpatialTests.bruteDistance(($0.latitude, $0.longitude), (latitude, longitude))) }
                .filter { $0.1 <= radius }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
            for (offset, limit) in [(0, 1), (0, 20), (15, 40)] {
                let request = SearchRequest(near: center, radius: radius, limit: limit, offset: offset)
                let hits = try index.search(request).hits
                #expect(hits.map(\.uri) == Array(expected.dropFirst(offset).prefix(limit).map(\.0)), "circle \(latitude),\(longitude) r=\(radius)")
                #expect(hits.map(\.uri) == (try index.search(Self.joined(request)).hits.map(\.uri)))
                // Near the poles, across 180° and around the antipode too, the tree answers alone.
                #expect(try Self.picksFromTree(index, request), "circle \(latitude),\(longitude) r=\(radius)")
            }
        }
    }

    @Test("a point with a box, with or without a radius: pages by distance from the point, inside the box")
    func pointAndBox() throws {
        let (index, places) = Self.fixture
        let box = try BoundingBox(minLatitude: Self.center.latitude - 0.05, minLongitude: Self.center.longitude - 0.02,
                                  maxLatitude: Self.center.latitude + 0.1, maxLongitude: Self.center.longitude + 0.15)
        // The point inside the box, and outside it.
        for point in [(Self.center.latitude + 0.01, Self.center.longitude), (Self.center.latitude - 0.2, Self.center.longitude - 0.1)] {
            let near = try Coordinate(latitude: point.0, longitude: point.1)
            for radius in [nil, 12_000.0, 30_000] {
                let expected = places.filter { box.contains(latitude: $0.latitude, longitude: $0.longitude) }
                    .map { ($0.uri, SpatialTests.bruteDistance(($0.latitude, $0.longitude), point)) }
                    .filter { radius == nil || $0.1 <= radius! }
                    .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
                for (offset, limit) in [(0, 20), (11, 17)] {
                    var request = SearchRequest(near: near, radius: radius, limit: limit, offset: offset)
                    request.boundingBox = box
                    let hits = try index.search(request).hits.map(\.uri)
                    // (A circle that misses the box reads nothing at all.)
                    if !expected.isEmpty { #expect(try Self.picksFromTree(index, request)) }
                    #expect(hits == (try index.search(Self.joined(request)).hits.map(\.uri)))
                    #expect(hits == Array(expected.dropFirst(offset).prefix(limit).map(\.0)), "near \(point), radius \(String(describing: radius))")
                }
            }
        }
    }

    @Test("an R-tree row that disagrees with its item (a damaged index) is read joined: the answer is the join's")
    func damaged() throws {
        let path = Scratch.folder.appendingPathComponent("nearest-damaged-\(UUID().uuidString).searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        var generator = SeededGenerator(state: 5)
        let items = (0..<300).map { key in
            let (latitude, longitude) = Self.destination(Self.center, distance: Double.random(in: 0...20_000, using: &generator),
                                                         bearing: Double.random(in: 0..<360, using: &generator))
            return IndexedItem(uri: "x-coredata://D/Place/p\(key)", entity: "Place", displayName: "place", latitude: latitude, longitude: longitude)
        }
        try index.apply(IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "D", storePath: "/d", token: 1)))
        let center = try Coordinate(latitude: Self.center.latitude, longitude: Self.center.longitude)
        let request = SearchRequest(near: center, radius: 20_000, limit: 10)
        let before = try index.search(request).hits.map(\.uri)
        // The nearest place's item moves 5 km away while its R-tree row stays; the second nearest loses its item.
        let (first, second) = try index.read { db in
            (try String.fetchOne(db, sql: "SELECT uri FROM items WHERE uri = ?", arguments: [before[0]]) ?? "",
             try String.fetchOne(db, sql: "SELECT uri FROM items WHERE uri = ?", arguments: [before[1]]) ?? "")
        }
        try index.write { db in
            try db.execute(sql: "UPDATE items SET latitude = latitude + 0.045 WHERE uri = ?", arguments: [first])
            try db.execute(sql: "DELETE FROM items WHERE uri = ?", arguments: [second])
        }
        let hits = try index.search(request).hits
        #expect(hits.map(\.uri) == (try index.search(Self.joined(request)).hits.map(\.uri)))
        #expect(hits.map(\.distance) == (try index.search(Self.joined(request)).hits.map(\.distance)))
        #expect(!hits.map(\.uri).contains(second))
        #expect(hits.first?.uri != first)
        #expect(try !Self.picksFromTree(index, request), "read joined")
    }
}
