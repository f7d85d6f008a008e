import Foundation

/// Great-circle geometry on a sphere of Earth's mean radius, and the R-tree boxes that cover a circle.
enum GeoMath {
    /// Earth's mean radius in meters (IUGG).
    static let earthRadius = 6_371_008.8
    /// Half the equator: no two points are farther apart.
    static let maximumDistance = Double.pi * earthRadius

    /// Great-circle distance in meters (haversine, stable for small and antipodal distances).
    static func distance(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double {
        let φ1 = latitude1 * .pi / 180, φ2 = latitude2 * .pi / 180
        let Δφ = φ2 - φ1, Δλ = (longitude2 - longitude1) * .pi / 180
        let a = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * earthRadius * atan2(sqrt(min(1, a)), sqrt(max(0, 1 - a)))
    }

    /// A box that never crosses the antimeridian, in degrees.
    struct Box: Hashable {
        var minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double
    }

    /// A point's distance from `center` as its R-tree box (`box`) tells it, and how far the point's own distance
    /// may be from it: the distance to the box's center, and the box's size along a meridian and a parallel. A
    /// path from the point to the box's center along the two is at most that long, and a great circle no longer
    /// (by the triangle inequality the two distances differ by at most that). A metre's margin covers rounding:
    /// the haversine loses precision near the antipode (a few decimetres at worst).
    static func distanceBounds(from center: Coordinate, to box: Box) -> (distance: Double, error: Double) {
        let middle = distance(center.latitude, center.longitude, (box.minLatitude + box.maxLatitude) / 2, (box.minLongitude + box.maxLongitude) / 2)
        let size = ((box.maxLatitude - box.minLatitude) + (box.maxLongitude - box.minLongitude)) * .pi / 180 * earthRadius
        return (middle, size + 1)
    }

    /// Boxes whose union contains every point within `radius` meters of `center` (and a little more;
    /// callers refine with ``distance(_:_:_:_:)``). Handles circles over a pole and across the antimeridian.
    static func boxes(around center: Coordinate, radius: Double) -> [Box] {
        let δ = radius / earthRadius
        if δ >= .pi { return [Box(minLatitude: -90, maxLatitude: 90, minLongitude: -180, maxLongitude: 180)] }
        let φ = center.latitude * .pi / 180, λ = center.longitude * .pi / 180
        var minφ = φ - δ, maxφ = φ + δ
        // A little slack absorbs floating-point error at the edges; refinement is exact.
        let slack = 1e-9
        if maxφ >= .pi / 2 - slack || minφ <= -.pi / 2 + slack {
            // The circle contains a pole: every longitude, latitudes up to that pole.
            minφ = max(minφ, -.pi / 2)
            maxφ = min(maxφ, .pi / 2)
            if φ + δ >= .pi / 2 - slack { maxφ = .pi / 2 }
            if φ - δ <= -.pi / 2 + slack { minφ = -.pi / 2 }
            return [Box(minLatitude: minφ * 180 / .pi, maxLatitude: maxφ * 180 / .pi, minLongitude: -180, maxLongitude: 180)]
        }
        let Δλ = asin(min(1, sin(δ) / cos(φ))) + slack
        let minλ = λ - Δλ, maxλ = λ + Δλ
        let latitudes = (minφ * 180 / .pi - slack, maxφ * 180 / .pi + slack)
        if minλ < -.pi {
            return [Box(minLatitude: latitudes.0, maxLatitude: latitudes.1, minLongitude: (minλ + 2 * .pi) * 180 / .pi, maxLongitude: 180),
                    Box(minLatitude: latitudes.0, maxLatitude: latitudes.1, minLongitude: -180, maxLongitude: maxλ * 180 / .pi)]
        }
        if maxλ > .pi {
            return [Box(minLatitude: latitudes.0, maxLatitude: latitudes.1, minLongitude: minλ * 180 / .pi, maxLongitude: 180),
                    Box(minLatitude: latitudes.0, maxLatitude: latitudes.1, minLongitude: -180, maxLongitude: (maxλ - 2 * .pi) * 180 / .pi)]
        }
        return [Box(minLatitude: latitudes.0, maxLatitude: latitudes.1, minLongitude: minλ * 180 / .pi, maxLongitude: maxλ * 180 / .pi)]
    }

    /// The boxes of a bounding box: two when it crosses the antimeridian.
    static func boxes(of box: BoundingBox) -> [Box] {
        if box.crossesAntimeridian {
            return [Box(minLatitude: box.minLatitude, maxLatitude: box.maxLatitude, minLongitude: box.minLongitude, maxLongitude: 180),
                    Box(minLatitude: box.minLatitude, maxLatitude: box.maxLatitude, minLongitude: -180, maxLongitude: box.maxLongitude)]
        }
        return [Box(minLatitude: box.minLatitude, maxLatitude: box.maxLatitude, minLongitude: box.minLongitude, maxLongitude: box.maxLongitude)]
    }
}

extension BoundingBox {
    /// Whether the box holds the whole of `box` (an R-tree row's, which never crosses the antimeridian): its
    /// latitudes, and its longitudes on one side of the antimeridian when this box crosses it.
    func holds(_ box: GeoMath.Box) -> Bool {
        guard box.minLatitude >= minLatitude && box.maxLatitude <= maxLatitude else { return false }
        guard crossesAntimeridian else { return box.minLongitude >= minLongitude && box.maxLongitude <= maxLongitude }
        return box.minLongitude >= minLongitude || box.maxLongitude <= maxLongitude
    }
}
