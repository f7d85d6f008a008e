import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// One search in progress inside a read transaction.
struct Search {
    struct Candidate {
        var id: Int64
        var uri: String
        var entity: String
        var displayName: String
        var latitude: Double?
        var longitude: Double?
        var score: Double = 0
        var distance: Double?
    }

    let db: Database
    let request: SearchRequest
    let parsed: ParsedQuery?
    let predicate: FilterPredicate?
    /// Every statement run, with its arguments — kept only for `explain`.
    private(set) var statements: [(sql: String, arguments: StatementArguments)] = []
    private let recordsStatements: Bool

    init(db: Database, request: SearchRequest, parsed: ParsedQuery?, predicate: FilterPredicate? = nil, recordsStatements: Bool = false) {
        self.db = db
        self.request = request
        self.parsed = parsed
        self.predicate = predicate
        self.recordsStatements = recordsStatements
    }

    /// Notes a statement for `explain`; a plain search keeps nothing.
    mutating func record(_ sql: String, _ arguments: StatementArguments) {
        if recordsStatements { statements.append((sql, arguments)) }
    }

    /// The ranking function's phrase plan for the query (its typo expansions' edits).
    var phrasePlan: String { parsed?.phrasePlan ?? "" }

    var needed: Int { request.offset.addingReportingOverflow(request.limit).overflow ? Int.max : request.offset + request.limit }
    var center: Coordinate? { request.near ?? request.boundingBox?.center }

    /// The entity and filter conditions every plan applies to the items it reads.
    var entityFilter: (sql: String, arguments: StatementArguments) { itemFilter(probing: true) }

    /// The entity and filter conditions; `probing` checks each item read against the attribute index
    /// (for plans driven by FTS5, the R-tree or an ordered walk), otherwise the filter's item set is read
    /// once (for the filter-only plan, which it drives).
    func itemFilter(probing: Bool) -> (sql: String, arguments: StatementArguments) {
        var sql = "", arguments = StatementArguments()
        if !request.entities.isEmpty {
            sql += " AND i.entity IN (\(databaseQuestionMarks(count: request.entities.count)))"
            arguments += StatementArguments(request.entities)
        }
        if let predicate {
            let compiled = predicate.sql(correlated: probing)
            sql += " AND " + compiled.sql
            arguments += compiled.arguments
        }
        return (sql, arguments)
    }

    mutating func run() throws -> SearchResults {
        var (candidates, plan) = try plan()
        if let order = request.sortAttribute {
            // The filter plan walked the attribute in order and paged already.
            if plan != .filter { candidates = try ordered(candidates, by: order) }
        } else if plan != .text {
            // The text plan already ordered and paged in SQL.
            candidates = try ordered(candidates)
        }
        var hits = candidates.map { candidate in
            // The ranking function folds typos into the score as penalties; a hit reports them apart.
            // Only scores from searchlight_rank carry penalties (a filter plan's score is the item's raw rank).
            let ranked = parsed != nil && plan != .filter && plan != .nearest && candidate.score < 0
            let typos = ranked ? Int(min(64, ((SearchIndex.scoreCeiling - candidate.score) / SearchIndex.typoPenalty).rounded(.down))) : 0
            var hit = SearchHit(uri: candidate.uri, entity: candidate.entity, displayName: candidate.displayName,
                                score: candidate.score + Double(typos) * SearchIndex.typoPenalty,
                                latitude: candidate.latitude, longitude: candidate.longitude, distance: candidate.distance, snippet: nil)
            hit.typos = typos
            return hit
        }
        if request.snippets, let parsed {
            for index in hits.indices { hits[index].snippet = try snippet(id: candidates[index].id, expression: parsed.expression) }
        }
        return SearchResults(hits: hits, plan: plan, parsedQuery: parsed)
    }

    mutating func count() throws -> Int {
        if let parsed, request.near == nil, request.boundingBox == nil {
            let filter = entityFilter
            let sql = "SELECT COUNT(*) FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ?" + filter.sql
            return try Int.fetchOne(db, sql: sql, arguments: [parsed.expression] + filter.arguments) ?? 0
        }
        return try plan().candidates.count
    }

    // MARK: Planning

    mutating func plan() throws -> (candidates: [Candidate], plan: SearchPlan) {
        let spatial = request.near != nil || request.boundingBox != nil
        if parsed == nil && !spatial {
            return (try request.sortAttribute.map { order in try filtered(in: order) } ?? filtered(), .filter)
        }
        guard let parsed else { return (try nearest(textFilter: .none), .nearest) }
        // Ordered by an attribute, every match is needed before the page.
        guard spatial else { return (try textMatches(expression: parsed.expression, pagedInSQL: request.sortAttribute == nil), .text) }
        let bounded = request.radius != nil || request.boundingBox != nil
        let plan: SearchPlan
        if let forced = request.forcedPlan {
            plan = forced
        } else if !bounded && request.effectiveSort == .relevance {
            // Every match is a hit ordered by relevance: only the words narrow it down.
            plan = .textThenPlace
        } else {
            plan = try cheapestPlan(parsed, bounded: bounded)
        }
        switch plan {
        case .textThenPlace:
            let matches = try textMatches(expression: parsed.expression, pagedInSQL: false)
            return (matches.compactMap(refine), .textThenPlace)
        case .placeThenText:
            return (try nearest(textFilter: .probe(parsed.expression)), .placeThenText)
        default:
            return (try nearest(textFilter: .intersect(parsed.expression)), .intersection)
        }
    }
}
