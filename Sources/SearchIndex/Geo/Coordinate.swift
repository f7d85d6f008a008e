import Foundation

/// A point on Earth in degrees.
public struct Coordinate: Sendable, Hashable, CustomStringConvertible {
    /// Half the equator in meters, on the sphere distances are measured on: no two points are farther apart.
    package static let maximumDistance = GeoMath.maximumDistance

    /// Latitude, −90…90.
    public var latitude: Double
    /// Longitude, −180…180.
    public var longitude: Double

    /// Creates a coordinate, rejecting values off the globe.
    public init(latitude: Double, longitude: Double) throws(SearchIndexError) {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw .invalidLocation(reason: "latitude \(latitude) is outside −90…90")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw .invalidLocation(reason: "longitude \(longitude) is outside −180…180")
        }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// For values already known to be on the globe.
    init(validLatitude latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    public var description: String { "\(latitude),\(longitude)" }
}

/// A latitude/longitude box. When `minLongitude > maxLongitude` it crosses the antimeridian.
public struct BoundingBox: Sendable, Hashable {
    /// Southern edge.
    public var minLatitude: Double
    /// Western edge.
    public var minLongitude: Double
    /// Northern edge.
    public var maxLatitude: Double
    /// Eastern edge.
    public var maxLongitude: Double

    /// Creates a box, rejecting values off the globe or a south edge north of the north edge.
    public init(minLatitude: Double, minLongitude: Double, maxLatitude: Double, maxLongitude: Double) throws(SearchIndexError) {
        _ = try Coordinate(latitude: minLatitude, longitude: minLongitude)
        _ = try Coordinate(latitude: maxLatitude, longitude: maxLongitude)
        guard minLatitude <= maxLatitude else {
            throw .invalidLocation(reason: "the box's minimum latitude \(minLatitude) is north of its maximum \(maxLatitude)")
        }
        self.minLatitude = minLatitude
        self.minLongitude = minLongitude
        self.maxLatitude = maxLatitude
        self.maxLongitude = maxLongitude
    }

    /// Whether the box crosses the antimeridian (180°).
    public var crossesAntimeridian: Bool { minLongitude > maxLongitude }

    /// Whether a point lies inside (edges included).
    public func contains(latitude: Double, longitude: Double) -> Bool {
        guard latitude >= minLatitude && latitude <= maxLatitude else { return false }
        return crossesAntimeridian
            ? longitude >= minLongitude || longitude <= maxLongitude
            : longitude >= minLongitude && longitude <= maxLongitude
    }

    /// The point halfway across the box (across the antimeridian when it crosses it).
    public var center: Coordinate {
        let span = crossesAntimeridian ? maxLongitude + 360 - minLongitude : maxLongitude - minLongitude
        var longitude = minLongitude + span / 2
        if longitude > 180 { longitude -= 360 }
        return Coordinate(validLatitude: (minLatitude + maxLatitude) / 2, longitude: longitude)
    }
}
