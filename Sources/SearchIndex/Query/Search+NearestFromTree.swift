import Foundation
import GRDB
import GRDBSQLite

/// The nearest places to a point told apart from the R-tree's own boxes: only the page's rows are read.
///
/// Every R-tree row is a point's box, its corners rounded outward to 32-bit floats (within about a metre), so
/// a row's box bounds the point's distance from the center on both sides. Joining every row of a circle to its
/// item for the exact coordinates read an items row per place (333 within 25 km of Munich: three quarters of
/// the statement's time, the items table being most of a 1.2 GB index). Here the rows' bounds pick the rows
/// that can be on the page, and only those are read, with their names, and measured exactly.
extension Search {
    /// Whether the nearest places are picked from the R-tree's bounds: places alone by distance from a point or
    /// a box's center, a page of a size that reads its details apart; no entity filter (checked on the items row).
    var picksNearestFromTree: Bool {
        center != nil && request.entities.isEmpty && request.sortAttribute == nil && request.effectiveSort == .distance
            && needed > 0 && !readsDetailsWithPlaces && needed != Int.max
    }

    /// The hits within `radius` that can be on the page, read with their details and exact distances: every
    /// row whose nearest possible distance is within the `needed`-th smallest farthest possible one, ties
    /// included. Empty when the region surely holds fewer than `needed` hits short of the last round
    /// (`isLast`): the caller widens it. Nil past `limit` rows read, or when a row read for the page disagrees
    /// with its item (a damaged index; a row not read is not checked): the caller reads the region joined instead.
    mutating func nearestFromTree(in boxes: [GeoMath.Box], radius: Double, isLast: Bool, limit: Int = .max) throws -> [Candidate]? {
        guard let center else { return nil }
        let bounding = request.boundingBox
        // Each row's nearest and farthest possible distance from the center, and whether the request's box (if
        // any) holds its whole box: a row whose box straddles an edge may be outside.
        var bounds: [(id: Int64, nearest: Double, farthest: Double, inside: Bool)] = []
        var read = 0
        try stepRows(in: boxes, selecting: "g.id, g.min_lat, g.max_lat, g.min_lon, g.max_lon", from: "items_geo g") { handle, id in
            read += 1
            guard read <= limit else { return false }
            let box = GeoMath.Box(minLatitude: sqlite3_column_double(handle, 1), maxLatitude: sqlite3_column_double(handle, 2),
                                  minLongitude: sqlite3_column_double(handle, 3), maxLongitude: sqlite3_column_double(handle, 4))
            let (distance, error) = GeoMath.distanceBounds(from: center, to: box)
            guard distance - error <= radius else { return true }
            bounds.append((id, distance - error, distance + error, bounding?.holds(box) ?? true))
            return true
        }
        guard read <= limit else { return nil }
        // The rows surely within the radius; past the page's worth of them, the page's last hit is at most the
        // `needed`-th smallest farthest distance among them, and a row nearer than that at best may be on it.
        let sure = bounds.compactMap { $0.inside && $0.farthest <= radius ? $0.farthest : nil }
        let reach: Double
        if sure.count >= needed {
            reach = Self.smallest(needed, of: sure)
        } else if isLast || bounds.count >= needed {
            // The last round, or the radius's edge decides: every row that may be within it, measured.
            reach = radius
        } else {
            return []
        }
        var picked: [Int64: (nearest: Double, farthest: Double, inside: Bool)] = [:]
        for row in bounds where row.nearest <= reach { picked[row.id] = (row.nearest, row.farthest, row.inside) }
        let rows = try rows(ids: Array(picked.keys), checkingFilter: false)
        guard rows.count == picked.count else { return nil }  // an R-tree row without its item
        var hits: [Candidate] = []
        hits.reserveCapacity(rows.count)
        for var row in rows {
            // Measured exactly, as rows joined to their items are. A place its R-tree box does not hold (a
            // damaged index) is read joined instead.
            guard let latitude = row.latitude, let longitude = row.longitude, let bound = picked[row.id] else { return nil }
            let distance = GeoMath.distance(center.latitude, center.longitude, latitude, longitude)
            guard bound.nearest <= distance && distance <= bound.farthest else { return nil }
            if let bounding, !bounding.contains(latitude: latitude, longitude: longitude) {
                if bound.inside { return nil }
                continue
            }
            guard distance <= radius else { continue }
            row.distance = distance
            hits.append(row)
        }
        return hits
    }
}
