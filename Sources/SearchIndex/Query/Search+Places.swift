import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// Place queries: R-tree boxes of a circle or box, counts in a region, the nearest items.
extension Search {
    /// Rows inside the R-tree boxes, entity-filtered and refined (``refine(_:)``: their distances, the rows
    /// the R-tree's boxes hold outside the request's circle or box dropped). `details` reads names and URIs
    /// too: for a page large enough to be most of what is read (every hit within a radius), where fetching
    /// them for the page in a second pass would cost more. Stops after `limit` rows.
    mutating func rowsInBoxes(_ boxes: [GeoMath.Box], details: Bool = false, limit: Int = .max) throws -> [Candidate] {
        var candidates: [Candidate] = []
        let request = request  // read while the stepping records its statements
        try stepRows(in: boxes, selecting: "i.id, i.latitude, i.longitude" + (details ? ", i.uri, i.entity, i.display_name" : ""),
                     from: "items_geo g JOIN items i ON i.id = g.id") { handle, id in
            guard candidates.count < limit else { return false }
            // Placed before its strings are read: a circle's boxes hold a quarter more rows than the circle.
            let latitude = SQLiteCall.optionalDouble(handle, 1), longitude = SQLiteCall.optionalDouble(handle, 2)
            guard let distance = request.placement(latitude: latitude, longitude: longitude) else { return true }
            candidates.append(Candidate(id: id, uri: details ? SQLiteCall.text(handle, 3) : "", entity: details ? SQLiteCall.text(handle, 4) : "",
                                        displayName: details ? SQLiteCall.text(handle, 5) : "", latitude: latitude, longitude: longitude,
                                        distance: distance))
            return candidates.count < limit
        }
        return candidates
    }

    /// Steps the R-tree rows inside `boxes` that the request's filter keeps, each once: `columns` of `tables`
    /// (`items_geo g`, joined or not), the row's id first. `body` reads the row and says whether to go on.
    /// Stepped through the C API: GRDB's row cursor costs as much per row as the R-tree and join.
    mutating func stepRows(in boxes: [GeoMath.Box], selecting columns: String, from tables: String,
                           _ body: (_ handle: OpaquePointer, _ id: Int64) throws -> Bool) throws {
        // An attribute filter probes each R-tree row before it is joined to its item.
        let filter = itemFilter(probing: true, itemID: "g.id")
        let sql = """
            SELECT \(columns)
            FROM \(tables)
            WHERE g.max_lat >= ? AND g.min_lat <= ? AND g.max_lon >= ? AND g.min_lon <= ?\(filter.sql)
            """
        var seen: Set<Int64> = []
        for box in boxes {
            let arguments: StatementArguments = [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude] + filter.arguments
            record(sql, arguments)
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments(arguments)
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }  // stopped early, it would hold its cursor until its next use
            while try SQLiteCall.step(handle, db: db) {
                let id = sqlite3_column_int64(handle, 0)
                // One box, or boxes split at the antimeridian or a pole, which never share a row.
                if boxes.count > 1 { guard seen.insert(id).inserted else { continue } }
                guard try body(handle, id) else { return }
            }
        }
    }

    /// Whether places alone are read with their names and URIs: when the page is most of what is read
    /// (over 1,000 hits); unpaged (a count, facets), only ids are needed.
    var readsDetailsWithPlaces: Bool { needed > 1_000 && needed != Int.max }

    /// The R-tree boxes of the region the request allows: the circle of `radius` intersected with the box.
    func regionBoxes(radius: Double?) -> [GeoMath.Box] {
        var circle: [GeoMath.Box]? = nil
        if let center = request.near ?? center, let radius { circle = GeoMath.boxes(around: center, radius: radius) }
        let boxes = request.boundingBox.map(GeoMath.boxes(of:))
        switch (circle, boxes) {
        case (let circle?, let boxes?):
            return circle.flatMap { a in boxes.compactMap { b in
                let box = GeoMath.Box(minLatitude: max(a.minLatitude, b.minLatitude), maxLatitude: min(a.maxLatitude, b.maxLatitude),
                                      minLongitude: max(a.minLongitude, b.minLongitude), maxLongitude: min(a.maxLongitude, b.maxLongitude))
                return box.minLatitude <= box.maxLatitude && box.minLongitude <= box.maxLongitude ? box : nil
            } }
        case (let circle?, nil): return circle
        case (nil, let boxes?): return boxes
        case (nil, nil): return [GeoMath.Box(minLatitude: -90, maxLatitude: 90, minLongitude: -180, maxLongitude: 180)]
        }
    }

    mutating func countInRegion(cap: Int, radius: Double?) throws -> Int {
        var total = 0
        for box in regionBoxes(radius: radius) {
            total += try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM (SELECT 1 FROM items_geo WHERE max_lat >= ? AND min_lat <= ? AND max_lon >= ? AND min_lon <= ? LIMIT ?)"),
                                      arguments: [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude, cap]) ?? 0
            if total >= cap { break }
        }
        return total
    }

    /// How `nearest` narrows places down to text matches.
    enum TextFilter {
        /// No text: places only.
        case none
        /// Check and score each place from its term vector (few places, broad words).
        case vectors(VectorQuery)
        /// Scan FTS5 once, keeping and scoring only the places' rows.
        case intersect(String)
    }

    /// Nearest-first search driven by the R-tree: circles of growing radius around the reference
    /// point until enough hits lie inside (everything inside a circle of radius r is nearer than
    /// anything outside it), or the circle covers the allowed region.
    mutating func nearest(textFilter: TextFilter) throws -> [Candidate] {
        guard center != nil else { return [] }
        let limit = request.radius ?? GeoMath.maximumDistance
        let located = max(1, try estimatedItemCount())
        // Start where a uniform spread would put 4 × needed points, and grow ×4 each round; places alone
        // around a point start an eighth of that and grow ×2: places crowd (a circle of 83 km around Paris holds 20,000 of
        // GeoNames' places four times over, where 10 were wanted), and a round over a few rows costs
        // little more than its R-tree descent, so overshooting the area is what costs.
        let earthArea = 4 * Double.pi * GeoMath.earthRadius * GeoMath.earthRadius
        let wanted = Double(min(needed, located)) * 4
        var placesAlone = request.boundingBox == nil
        if case .none = textFilter {} else { placesAlone = false }
        let uniform = sqrt(wanted / Double(located) * earthArea / .pi)
        var radius = min(limit, placesAlone ? max(500, uniform / 8) : max(1_000, uniform))
        let growth = placesAlone ? 2.0 : 4.0
        // A radius within reach of the first circle or two is read at once: a round costs a statement.
        if radius * growth * growth >= limit { radius = limit }
        // Without a distance order, every hit in the region is needed: go straight to the limit.
        if request.effectiveSort != .distance || needed == Int.max { radius = limit }
        // A box the first circle covers, or one holding few places, is read once rather than through
        // growing circles. Places alone are read outright, up to the cap: a box under it is then answered
        // without counting it first.
        if let box = request.boundingBox, let center, request.radius == nil, radius < limit {
            let cap = 2_000
            // Distance from the center grows along each edge towards its ends: the corners are the farthest.
            let corners = [(box.minLatitude, box.minLongitude), (box.minLatitude, box.maxLongitude),
                           (box.maxLatitude, box.minLongitude), (box.maxLatitude, box.maxLongitude)]
            if corners.allSatisfy({ GeoMath.distance(center.latitude, center.longitude, $0.0, $0.1) <= radius }) {
                radius = limit
            } else if case .none = textFilter {
                if picksNearestFromTree {
                    if let page = try nearestFromTree(in: regionBoxes(radius: nil), radius: limit, isLast: true, limit: cap) { return page }
                } else {
                    let rows = try rowsInBoxes(regionBoxes(radius: nil), details: readsDetailsWithPlaces, limit: cap + 1)
                    if rows.count <= cap { return rows }
                }
            } else if try countInRegion(cap: cap + 1, radius: nil) <= cap {
                radius = limit
            }
        }
        while true {
            var hits: [Candidate]
            switch textFilter {
            case .none:
                if picksNearestFromTree, let picked = try nearestFromTree(in: regionBoxes(radius: radius), radius: radius, isLast: radius >= limit) {
                    hits = picked
                } else {
                    hits = try rowsInBoxes(regionBoxes(radius: radius), details: readsDetailsWithPlaces)
                }
            case .vectors(let query):
                hits = try vectorMatches(in: regionBoxes(radius: radius), query: query)
            case .intersect(let expression):
                // One FTS5 scan keeps the rows of the region: only those are joined and scored.
                let ids = try idsInBoxes(regionBoxes(radius: radius)).sorted()
                hits = try textMatches(expression: expression, within: ids).compactMap(refine)
            }
            // In place: every hit within a radius can be thousands of candidates.
            hits.removeAll { !(($0.distance ?? 0) <= radius) }
            if hits.count >= needed || radius >= limit { return hits }
            radius = min(limit, radius * growth)
        }
    }

    /// Row ids inside the R-tree boxes, without touching the items table.
    mutating func idsInBoxes(_ boxes: [GeoMath.Box]) throws -> [Int64] {
        var ids: [Int64] = []
        let sql = "SELECT id FROM items_geo WHERE max_lat >= ? AND min_lat <= ? AND max_lon >= ? AND min_lon <= ?"
        for box in boxes {
            let arguments: StatementArguments = [box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude]
            record(sql, arguments)
            ids += try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
        }
        return ids
    }
}
