import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// One frequent word, prefix or phrase within a wide region, from its placed list (see TermLeaders+Places):
/// the list's rows best first, those that may lie in the region read from their items and scored from their
/// term vectors, until the page's last score beats what any row further down, or left off, can score now; or,
/// past the list's end, the rows its tail (TermLeaders+PlacedTails) has in the region, read and scored too.
extension Search {
    /// The narrowest region a placed list is always tried for (meters: a radius, or half a box's diagonal).
    /// A narrower one usually holds few places, which the R-tree's plans score in well under a millisecond,
    /// where walking a word's list (up to 65,536 entries, ≈ 2 ns each outside the region) would add to it; it
    /// is tried when it holds at least ``placesWorthAWalk(entries:)`` places.
    static let narrowestPlacedRegion = 100_000.0

    /// The places a region narrower than ``narrowestPlacedRegion`` holds when walking a list of `entries`
    /// costs less than scoring them from their term vectors (≈ 0.65 µs a place, ≈ 2 ns an entry): a city's
    /// circle is dense (`city` within 50 km of Mexico City: 3,565 places, scored in 5–7 ms, where the list
    /// proves the page in 0.3).
    static func placesWorthAWalk(entries: Int64) -> Int { Int(max(64, entries / 300)) }

    /// The rows a walk reads from their items at most (≈ 2 µs each) before it leaves the page to the other
    /// plans: a region whose page it has not proven by then holds few of the list's best rows (or a filter
    /// leaves few of them), and the walk's cost is added to theirs.
    static let maximumPlacedReads = 600

    /// The page of the query's one word, prefix or phrase within the request's region, by relevance, when
    /// its placed list proves it; nil otherwise (no list, a stale one, a narrow region, a page deeper than
    /// ``TermLeaders/maximumPlacedPage``, or a page the list's rows do not prove, with no tail to read the
    /// rest from or more rows to read than ``maximumPlacedReads``). The page is then exactly the one full
    /// scoring gives.
    mutating func placedListPage(_ parsed: ParsedQuery) throws -> [Candidate]? {
        guard request.usesTermLeaders, request.effectiveSort == .relevance, request.sortAttribute == nil,
              needed <= TermLeaders.maximumPlacedPage, let key = parsed.leaderKey,
              let region = PlacedRegion(request, boxes: regionBoxes(radius: request.radius)),
              let list = try TermLeaders.placedListing(key: key, db: db) else { return nil }
        if region.span < Self.narrowestPlacedRegion {
            let worth = Self.placesWorthAWalk(entries: list.entries)
            guard try countInRegion(cap: worth, radius: request.radius) >= worth else { return nil }
        }
        return try walkedPage(list, parsed, reading: "each listed row that may lie in the region", budget: Self.maximumPlacedReads, within: region)
    }

    /// The page of a placed list's rows within `region` (all of them without one) and among `ids` (sorted; all
    /// of them without), read under the request's filters and scored from the query's vectors, best first,
    /// until the page's last score beats what any row further down, or left off, can score now; past the list's
    /// end, every such row of its tail is read, and the page is exact. Nil when it cannot be proven: more than
    /// `budget` reads, no tail to read the rest from, a damaged list, a row its vector does not match.
    mutating func walkedPage(_ list: TermLeaders.PlacedListing, _ parsed: ParsedQuery, reading rows: String, budget: Int,
                             within region: PlacedRegion? = nil, among ids: [Int64]? = nil) throws -> [Candidate]? {
        // Plain values the walks' closures capture: a region checked through a closure handed in was copied
        // for every entry (1.6 ms of `Sha*` within 100 km of Lausanne's 2.5).
        let listRegion = region ?? .whole, tailRegion = listRegion.widened(for: .tail)
        let checksIDs = ids != nil, ids = ids ?? []
        guard let query = try vectorQuery(parsed) else { return nil }
        let statement = try scoredRowStatement(reading: rows)
        // The page so far, best first.
        var page: [Candidate] = [], reads = 0
        let needed = needed
        func read(_ id: Int64) throws -> Bool {
            reads += 1
            guard reads <= budget else { return false }
            switch try Self.readScoredRow(id, with: statement, db: db) {
            case .filteredOut: return true
            case .unmatched: return false  // the list is not what it says
            case .scored(let candidate):
                guard let placed = refine(candidate) else { return true }
                let position = page.firstIndex { SearchCandidate.ranksBefore(placed, $0) } ?? page.endIndex
                if position < needed {
                    page.insert(placed, at: position)
                    if page.count > needed { page.removeLast() }
                }
                return true
            }
        }
        // The entries best first, until the page is proven (true) or cannot be (false).
        func walk() throws -> Bool {
            try SQLiteCall.withVectorQuery(query.pointer, boundTo: statement, parameter: 1) {
                let answer = try list.walk(db: db) { entry in
                    // Every row further down scored at most this one when listed.
                    if page.count == needed, let last = page.last, list.precedes(last.score, rowsListedAtMost: Double(entry.score)) { return true }
                    guard listRegion.mayHold(latitude: entry.latitude, longitude: entry.longitude), !checksIDs || ids.sortedContains(entry.id) else { return nil }
                    return try read(entry.id) ? nil : false
                }
                if let answer { return answer }
                // Past the last entry: a row left off scored at most the threshold when listed.
                guard let threshold = list.drift.threshold else { return true }
                if page.count == needed, let last = page.last, list.precedes(last.score, rowsListedAtMost: threshold) { return true }
                // Or the rows left off, from the tail: those it lets through are read, and the page is exact.
                var left: [Int64] = []
                let walked = try list.walkTail(db: db) { id, latitude, longitude in
                    if tailRegion.mayHold(latitude: latitude, longitude: longitude), !checksIDs || ids.sortedContains(id) { left.append(id) }
                    return reads + left.count <= budget
                }
                guard walked == true else { return false }
                // In id order: the items' B-tree read forward.
                for id in left.sorted() where try !read(id) { return false }
                return true
            }
        }
        do {
            return try walk() ? page : nil
        } catch let error as DatabaseError where error.message == SEARCHLIGHT_VECTOR_FALLBACK_LIMIT {
            // Rows the vectors cannot score (a prefix's term twice at one position), each an FTS5 statement:
            // the other plans scan FTS5 once instead.
            return nil
        }
    }
}

extension Search {
    /// An item read by id and scored from the query's term vectors, as a walk of placed lists reads it.
    enum ScoredRow {
        /// The entity or attribute filters leave it out (or it is gone).
        case filteredOut
        /// Its vector does not match the query: whatever named it (a list, an FTS5 scan) is not what it says.
        case unmatched
        /// Its candidate, scored, before the region's exact check.
        case scored(Candidate)
    }

    /// The statement that reads one item by id (parameter 2) scored from the term-vector query bound to parameter
    /// 1, under the request's entity and attribute filters; recorded for `explain` as reading `rows`.
    mutating func scoredRowStatement(reading rows: String) throws -> Statement {
        let filter = itemFilter(probing: true, itemID: "i.id")
        let sql = """
            SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude,
                searchlight_vector_rank(i.id, i.term_vector, i.value_lengths, i.rank, ?) AS score
            FROM items i WHERE i.id = ?\(filter.sql)
            """
        record(sql, ["(the query's term vectors)", "(\(rows))"] + filter.arguments)
        let statement = try db.cachedStatement(sql: sql)
        statement.setUncheckedArguments([DatabaseValue.null, 0] + filter.arguments)
        return statement
    }

    /// Reads one item with a ``scoredRowStatement(reading:)`` whose vector query is bound.
    static func readScoredRow(_ id: Int64, with statement: Statement, db: Database) throws -> ScoredRow {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_bind_int64(handle, 2, id)
        guard try SQLiteCall.step(handle, db: db) else { return .filteredOut }
        guard sqlite3_column_type(handle, 6) != SQLITE_NULL else { return .unmatched }
        return .scored(Candidate(id: sqlite3_column_int64(handle, 0), uri: SQLiteCall.text(handle, 1), entity: SQLiteCall.text(handle, 2),
                                 displayName: SQLiteCall.text(handle, 3), latitude: SQLiteCall.optionalDouble(handle, 4),
                                 longitude: SQLiteCall.optionalDouble(handle, 5), score: -sqlite3_column_double(handle, 6)))
    }
}

/// A request's region as a placed list checks its entries: their places are rounded (to `Float`s in a list, to
/// 16 bits in a tail), so the check keeps a margin wider than their rounding (and the item's own place decides,
/// exactly, after).
struct PlacedRegion {
    /// The regions's boxes, unwidened.
    private let exactBoxes: [GeoMath.Box]
    /// Boxes covering the region, widened by the margin.
    let boxes: [GeoMath.Box]
    /// The circle, when there is one.
    let center: Coordinate?, radius: Double?
    /// How wide the region is: the radius, or half a box's diagonal, the narrower.
    let span: Double
    /// The rounding its margins allow for.
    let rounding: Rounding

    /// How the places checked were rounded, and the margins that allows for.
    enum Rounding {
        /// A placed list's `Float`s: within 1e-5° of the `Double` they round (half a unit in the last place
        /// at 180°), about a meter.
        case list
        /// A tail's 16-bit steps: within half a step, 0.0014° of latitude and 0.0028° of longitude, at most
        /// 342 m apart.
        case tail

        /// The margin in degrees a box is widened by.
        var degrees: Double {
            switch self {
            case .list: 1e-4
            case .tail: 2 * TermLeaders.PlacedTail.longitudeError
            }
        }

        /// The margin in meters a circle is widened by.
        var meters: Double {
            switch self {
            case .list: 20
            case .tail: 500
            }
        }
    }

    /// Every place on the globe.
    static let whole = PlacedRegion(boxes: [GeoMath.Box(minLatitude: -90, maxLatitude: 90, minLongitude: -180, maxLongitude: 180)],
                                    center: nil, radius: nil, span: .infinity, rounding: .list)

    /// The region of a request with a reference point or a box (a point alone keeps every place: the whole
    /// globe); nil without either.
    init?(_ request: SearchRequest, boxes: [GeoMath.Box], rounding: Rounding = .list) {
        guard request.near != nil || request.boundingBox != nil else { return nil }
        var span = Double.infinity
        if let radius = request.radius, request.near != nil { span = radius }
        if let box = request.boundingBox {
            let width = box.minLongitude <= box.maxLongitude ? box.maxLongitude - box.minLongitude : 360 - box.minLongitude + box.maxLongitude
            span = Swift.min(span, GeoMath.distance(box.minLatitude, 0, box.maxLatitude, Swift.min(width, 179.9)) / 2)
        }
        self.init(boxes: boxes, center: request.radius == nil ? nil : request.near, radius: request.near == nil ? nil : request.radius,
                  span: span, rounding: rounding)
    }

    private init(boxes: [GeoMath.Box], center: Coordinate?, radius: Double?, span: Double, rounding: Rounding) {
        exactBoxes = boxes
        let margin = rounding.degrees
        self.boxes = boxes.map { box in
            GeoMath.Box(minLatitude: box.minLatitude - margin, maxLatitude: box.maxLatitude + margin,
                        minLongitude: box.minLongitude - margin, maxLongitude: box.maxLongitude + margin)
        }
        self.center = center
        self.radius = radius
        self.span = span
        self.rounding = rounding
    }

    /// The same region, its margins allowing for `rounding`.
    func widened(for rounding: Rounding) -> PlacedRegion {
        PlacedRegion(boxes: exactBoxes, center: center, radius: radius, span: span, rounding: rounding)
    }

    /// Whether a place rounded to `Float`s may lie in the region.
    func mayHold(latitude: Float, longitude: Float) -> Bool { mayHold(latitude: Double(latitude), longitude: Double(longitude)) }

    /// Whether a place rounded as the region's margins allow for may lie in it.
    func mayHold(latitude: Double, longitude: Double) -> Bool {
        guard boxes.contains(where: { latitude >= $0.minLatitude && latitude <= $0.maxLatitude && longitude >= $0.minLongitude && longitude <= $0.maxLongitude })
        else { return false }
        guard let center, let radius else { return true }
        return GeoMath.distance(center.latitude, center.longitude, latitude, longitude) <= radius + rounding.meters
    }
}
