import Foundation
@testable import SearchIndex
import Testing
import SeededRandom
import TestScratch

@Suite("Places: exact answers against brute force")
struct SpatialTests {
    /// An independent great-circle distance (spherical law of cosines in vector form).
    static func bruteDistance(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        func vector(_ p: (Double, Double)) -> (Double, Double, Double) {
            let φ = p.0 * .pi / 180, λ = p.1 * .pi / 180
            return (cos(φ) * cos(λ), cos(φ) * sin(λ), sin(φ))
        }
        let u = vector(a), v = vector(b)
        let cross = (u.1 * v.2 - u.2 * v.1, u.2 * v.0 - u.0 * v.2, u.0 * v.1 - u.1 * v.0)
        let sine = sqrt(cross.0 * cross.0 + cross.1 * cross.1 + cross.2 * cross.2)
        let cosine = u.0 * v.0 + u.1 * v.1 + u.2 * v.2
        return atan2(sine, cosine) * 6_371_008.8
    }

    struct Point { var uri: String; var latitude: Double; var longitude: Double }

    static let fixture: (SearchIndex, [Point]) = {
        var generator = SeededGenerator(state: 99)
        var points: [Point] = []
        for key in 0..<4000 {
            // Uniform on the sphere, plus clusters at the antimeridian and the poles.
            var latitude = asin(Double.random(in: -1...1, using: &generator)) * 180 / .pi
            var longitude = Double.random(in: -180...180, using: &generator)
            switch key % 8 {
            case 0: longitude = Bool.random(using: &generator) ? Double.random(in: 179...180, using: &generator) : Double.random(in: -180 ... -179, using: &generator)
            case 1: latitude = Double.random(in: 89.95...90, using: &generator)
            case 2: latitude = Double.random(in: -90 ... -89.95, using: &generator)
            default: break
            }
            points.append(Point(uri: String(format: "x-coredata://S/Place/p%05d", key), latitude: latitude, longitude: longitude))
        }
        let path = Scratch.folder.appendingPathComponent("spatial-\(UUID().uuidString).searchindex").path
        // A fixture built once; a failure here fails every test with a clear trap message.
        let index = try! SearchIndex(path: path, mode: .readWrite(permissions: nil))
        let items = points.map { IndexedItem(uri: $0.uri, entity: "Place", displayName: "place", latitude: $0.latitude, longitude: $0.longitude) }
        _ = try! index.apply(IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "S", storePath: "/s", token: 1)))
        return (index, points)
    }()

    /// Circles: random, across the antimeridian, within 1 km of each pole, tiny and huge.
    static let circles: [(Double, Double, Double)] = {
        var generator = SeededGenerator(state: 7)
        var circles: [(Double, Double, Double)] = [
            (0, 179.9, 200_000), (10, -179.95, 500_000), (-45, 180, 1_000_000), (89.995, 0, 20_000), (90, 0, 5_000),
            (-89.995, 120, 20_000), (-90, 0, 50_000), (89.999, -179.9, 1_000), (0, 0, 20_037_000), (35, 139, 0),
            (60, -179.99, 3_000_000),
        ]
        for _ in 0..<40 {
            circles.append((asin(Double.random(in: -1...1, using: &generator)) * 180 / .pi,
                            Double.random(in: -180...180, using: &generator), Double.random(in: 1_000...3_000_000, using: &generator)))
        }
        return circles
    }()

    @Test("radius answers equal a brute-force great-circle computation")
    func radius() throws {
        let (index, points) = Self.fixture
        for (latitude, longitude, radius) in Self.circles {
            let center = try Coordinate(latitude: latitude, longitude: longitude)
            let expected = points.filter { Self.bruteDistance(($0.latitude, $0.longitude), (latitude, longitude)) <= radius }
            let hits = try index.search(SearchRequest(near: center, radius: radius, limit: 10_000)).hits
            #expect(Set(hits.map(\.uri)) == Set(expected.map(\.uri)), "circle \(latitude),\(longitude) r=\(radius)")
            #expect(hits.map(\.distance!) == hits.map(\.distance!).sorted())
            #expect(try index.count(SearchRequest(near: center, radius: radius)) == expected.count)
        }
    }

    @Test("large pages of every hit in a circle are slices of the whole answer, in distance then URI order")
    func largePages() throws {
        // Over 1,000 hits needed: the candidates carry their URIs and the page is put in order in place.
        let (index, points) = Self.fixture
        for (latitude, longitude, radius) in [(0.0, 0.0, 20_037_000.0), (45, 10, 9_000_000), (-30, 179.5, 12_000_000)] {
            let center = try Coordinate(latitude: latitude, longitude: longitude)
            let whole = try index.search(SearchRequest(near: center, radius: radius, limit: 10_000)).hits
            let expected = points.filter { Self.bruteDistance(($0.latitude, $0.longitude), (latitude, longitude)) <= radius }
            #expect(Set(whole.map(\.uri)) == Set(expected.map(\.uri)), "circle \(latitude),\(longitude)")
            #expect(whole.count > 1_000)
            for (a, b) in zip(whole, whole.dropFirst()) {
                #expect(a.distance! < b.distance! || (a.distance! == b.distance! && a.uri < b.uri), "\(a.uri) before \(b.uri)")
            }
            for (offset, limit) in [(0, 1_500), (100, 3_000), (700, 1_200), (whole.count - 600, 1_000), (0, whole.count), (whole.count, 2_000)] {
                let page = try index.search(SearchRequest(near: center, radius: radius, limit: limit, offset: offset)).hits.map(\.uri)
                #expect(page == Array(whole[min(offset, whole.count)..<min(whole.count, offset + limit)].map(\.uri)), "offset \(offset), limit \(limit)")
            }
        }
    }

    @Test("nearest k equal the brute-force k nearest, everywhere including the poles and 180°")
    func nearest() throws {
        let (index, points) = Self.fixture
        for (latitude, longitude, _) in Self.circles {
            for k in [1, 10, 57] {
                let center = try Coordinate(latitude: latitude, longitude: longitude)
                let expected = points.map { ($0.uri, Self.bruteDistance(($0.latitude, $0.longitude), (latitude, longitude))) }
                    .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(k)
                let result = try index.search(SearchRequest(near: center, limit: k))
                #expect(result.plan == .nearest)
                #expect(result.hits.map(\.uri) == expected.map(\.0), "k=\(k) at \(latitude),\(longitude)")
                for (hit, truth) in zip(result.hits, expected) { #expect(abs((hit.distance ?? 0) - truth.1) < 0.01) }
            }
        }
        // Paging continues the same order.
        let center = try Coordinate(latitude: 51.5, longitude: -0.1)
        let all = try index.search(SearchRequest(near: center, limit: 30)).hits.map(\.uri)
        let second = try index.search(SearchRequest(near: center, limit: 10, offset: 10)).hits.map(\.uri)
        #expect(Array(all[10..<20]) == second)
    }

    @Test("boxes, including ones that cross the antimeridian, equal brute force")
    func boxes() throws {
        let (index, points) = Self.fixture
        var generator = SeededGenerator(state: 3)
        var boxes: [(Double, Double, Double, Double)] = [(-10, 170, 10, -170), (-90, 179.5, 90, -179.5), (89.9, -180, 90, 180), (-90, -180, 90, 180), (0, 0, 0, 0)]
        for _ in 0..<40 {
            let a = Double.random(in: -90...90, using: &generator), b = Double.random(in: -90...90, using: &generator)
            boxes.append((min(a, b), Double.random(in: -180...180, using: &generator), max(a, b), Double.random(in: -180...180, using: &generator)))
        }
        for (minLat, minLon, maxLat, maxLon) in boxes {
            let box = try BoundingBox(minLatitude: minLat, minLongitude: minLon, maxLatitude: maxLat, maxLongitude: maxLon)
            let expected = points.filter { point in
                guard point.latitude >= minLat && point.latitude <= maxLat else { return false }
                return minLon <= maxLon ? point.longitude >= minLon && point.longitude <= maxLon : point.longitude >= minLon || point.longitude <= maxLon
            }
            let hits = try index.search(SearchRequest(boundingBox: box, limit: 10_000)).hits
            #expect(Set(hits.map(\.uri)) == Set(expected.map(\.uri)), "box \(minLat),\(minLon),\(maxLat),\(maxLon)")
        }
    }

    @Test("small pages of boxes are the brute-force nearest to the box's center, in order")
    func boxPages() throws {
        let (index, points) = Self.fixture
        var generator = SeededGenerator(state: 5)
        for _ in 0..<30 {
            let a = Double.random(in: -80...80, using: &generator), b = Double.random(in: -80...80, using: &generator)
            let west = Double.random(in: -180...180, using: &generator), width = Double.random(in: 1...200, using: &generator)
            let east = west + width > 180 ? west + width - 360 : west + width
            let box = try BoundingBox(minLatitude: min(a, b), minLongitude: west, maxLatitude: max(a, b), maxLongitude: east)
            let center = box.center
            let inside = points.filter { box.contains(latitude: $0.latitude, longitude: $0.longitude) }
                .map { ($0.uri, Self.bruteDistance(($0.latitude, $0.longitude), (center.latitude, center.longitude))) }
                .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
            for (offset, limit) in [(0, 1), (0, 7), (3, 5)] {
                let hits = try index.search(SearchRequest(boundingBox: box, limit: limit, offset: offset)).hits.map(\.uri)
                #expect(hits == Array(inside.dropFirst(offset).prefix(limit).map(\.0)), "box \(box) offset \(offset)")
            }
        }
    }

    @Test("the k-th smallest key, as the page selection finds it, is the sorted keys' k-th, ties and all")
    func selection() {
        var generator = SeededGenerator(state: 17)
        for _ in 0..<2_000 {
            let count = Int.random(in: 1...200, using: &generator)
            let distinct = Int.random(in: 1...max(1, count), using: &generator)
            let keys = (0..<count).map { _ in Double(Int.random(in: 0..<distinct, using: &generator)) * (Bool.random(using: &generator) ? 1 : -0.5) }
            let k = Int.random(in: 1...count, using: &generator)
            #expect(Search.smallest(k, of: keys) == keys.sorted()[k - 1], "k=\(k) of \(keys)")
        }
    }

    @Test("ties in distance break by URI across page boundaries")
    func ties() throws {
        let path = Scratch.folder.appendingPathComponent("ties-\(UUID().uuidString).searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        var generator = SeededGenerator(state: 11)
        let uris = (0..<40).map { String(format: "x-coredata://T/Place/p%03d", $0) }
        let items = uris.shuffled(using: &generator).map {
            IndexedItem(uri: $0, entity: "Place", displayName: "same place", latitude: 48.8566, longitude: 2.3522)
        }
        try index.apply(IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "T", storePath: "/t", token: 1)))
        let center = try Coordinate(latitude: 48.85, longitude: 2.35)
        // Small pages of many tied candidates take the selection path (the page's last key, then a sort).
        for (offset, limit) in [(0, 10), (5, 10), (13, 7), (35, 10), (0, 3), (2, 3), (8, 1)] {
            let hits = try index.search(SearchRequest(near: center, limit: limit, offset: offset)).hits.map(\.uri)
            #expect(hits == Array(uris[offset..<min(40, offset + limit)]), "offset \(offset)")
            let words = try index.search(SearchRequest(query: "same", near: center, radius: 5_000, limit: limit, offset: offset)).hits.map(\.uri)
            #expect(words == Array(uris[offset..<min(40, offset + limit)]), "words, offset \(offset)")
        }
    }

    @Test("out-of-range places are refused clearly")
    func invalid() {
        #expect(throws: SearchIndexError.self) { try Coordinate(latitude: 91, longitude: 0) }
        #expect(throws: SearchIndexError.self) { try Coordinate(latitude: 0, longitude: -180.5) }
        #expect(throws: SearchIndexError.self) { try Coordinate(latitude: .nan, longitude: 0) }
        #expect(throws: SearchIndexError.self) { try BoundingBox(minLatitude: 10, minLongitude: 0, maxLatitude: -10, maxLongitude: 5) }
        let (index, _) = Self.fixture
        #expect(throws: SearchIndexError.self) { try index.search(SearchRequest(radius: 10)) }
        #expect(throws: SearchIndexError.self) { try index.search(SearchRequest(near: try Coordinate(latitude: 0, longitude: 0), radius: -1)) }
        #expect(throws: SearchIndexError.self) { try index.search(SearchRequest()) }
    }
}
