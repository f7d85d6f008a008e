import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// One search in progress inside a read transaction.
struct Search {
    typealias Candidate = SearchCandidate

    let db: Database
    let request: SearchRequest
    let parsed: ParsedQuery?
    let predicate: FilterPredicate?
    /// Where the connection keeps the items of filter comparisons between searches; nil keeps nothing.
    let itemSets: FilterItemSets?
    /// Every statement run, with its arguments — kept only for `explain`.
    private(set) var statements: [(sql: String, arguments: StatementArguments)] = []
    let recordsStatements: Bool
    /// The planner's estimate of the query's matches, and the ranking's phrase plan with the lists' counts,
    /// once made.
    var matchEstimate: Int?, countedPlan: String?
    /// Whether the filter keeps few items (``filterKeepsFewItems()``), once decided.
    var keepsFewItems: Bool?

    init(db: Database, request: SearchRequest, parsed: ParsedQuery?, predicate: FilterPredicate? = nil, itemSets: FilterItemSets? = nil,
         recordsStatements: Bool = false) {
        self.db = db
        self.request = request
        self.parsed = parsed
        self.predicate = predicate
        self.itemSets = itemSets
        self.recordsStatements = recordsStatements
    }

    /// Notes a statement for `explain`; a plain search keeps nothing.
    mutating func record(_ sql: String, _ arguments: StatementArguments) {
        if recordsStatements { statements.append((sql, arguments)) }
    }

    /// Notes the statements of a search run on the way (a tier of typo expansions, one alternative alone), for `explain`.
    mutating func record(statementsOf other: Search) {
        if recordsStatements { statements += other.statements }
    }

    /// The ranking function's phrase plan for the query (its typo expansions' edits).
    var phrasePlan: String { parsed?.phrasePlan ?? "" }

    /// The phrase plan with the row counts of the words, prefixes and phrases that have a leader list, for a scan
    /// that visits only some of a doclist's rows (the R-tree's): the ranking would otherwise walk the whole
    /// doclist once more to count them. `Europa` within 50 km of Rome, whose expansion `europe` 408,720
    /// places hold: 23.5 → 18 ms at 940k items. Read once per search (growing circles scan again).
    mutating func countedPhrasePlan() throws -> String {
        if let countedPlan { return countedPlan }
        var plan = phrasePlan
        if request.usesTermLeaders, let parsed {
            let documents = try TermLeaders.documents(ofKeys: parsed.leaderKeys, db: db)
            if !documents.isEmpty { plan = parsed.phrasePlan { term in term.leaderKey.flatMap { documents[$0] } } }
        }
        countedPlan = plan
        return plan
    }

    /// Whether matches are ordered by distance: text-then-place then reads every match's place unscored,
    /// and only the page is scored (``run()``).
    var scoresPageOnly: Bool { request.effectiveSort == .distance && request.sortAttribute == nil }

    var needed: Int { request.offset.addingReportingOverflow(request.limit).overflow ? Int.max : request.offset + request.limit }
    var center: Coordinate? { request.near ?? request.boundingBox?.center }

    /// The entity and filter conditions every plan applies to the items it reads.
    var entityFilter: (sql: String, arguments: StatementArguments) { itemFilter(probing: true) }
    /// The entity conditions alone, for rows already known to pass the filter.
    var entityOnlyFilter: (sql: String, arguments: StatementArguments) { itemFilter(probing: true, includingPredicate: false) }

    /// The entity and filter conditions; `probing` checks each item read against the attribute index
    /// (for plans driven by FTS5, the R-tree or an ordered walk), otherwise the filter's item set is read
    /// once (for the filter-only plan, which it drives).
    /// `itemID` is the column a probe reads the item's id from: the driving table's own (FTS5's rowid)
    /// probes each row before it is joined to its item.
    func itemFilter(probing: Bool, itemID: String = "i.id", includingPredicate: Bool = true) -> (sql: String, arguments: StatementArguments) {
        var sql = "", arguments = StatementArguments()
        if !request.entities.isEmpty {
            sql += " AND i.entity IN (\(databaseQuestionMarks(count: request.entities.count)))"
            arguments += StatementArguments(request.entities)
        }
        if includingPredicate, let predicate {
            let compiled = predicate.sql(correlated: probing, itemID: itemID)
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
            candidates = try ordered(consume candidates)
        }
        if plan == .textThenPlace, scoresPageOnly, let parsed { candidates = try scored(candidates, expression: parsed.expression) }
        // Only scores from searchlight_rank carry penalties (a filter plan's score is the item's raw rank).
        let ranked = parsed != nil && plan != .filter && plan != .nearest
        var hits = candidates.map { $0.hit(ranked: ranked) }
        if request.snippets, let parsed {
            for index in hits.indices { hits[index].snippet = try snippet(id: candidates[index].id, expression: parsed.expression) }
        }
        return SearchResults(hits: hits, plan: plan, parsedQuery: parsed)
    }

    /// The first `needed` candidates of a request by relevance, in order, before they are hits (a page some other
    /// plan assembles from searches of its parts).
    mutating func rankedPage() throws -> [Candidate] {
        precondition(request.effectiveSort == .relevance && request.sortAttribute == nil, "a ranked page is ordered by relevance")
        let (candidates, plan) = try plan()
        return plan == .text ? candidates : try ordered(consume candidates)
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
        // One frequent word, prefix or phrase within a wide region (or anywhere placed): its best rows there,
        // from its placed list.
        if request.forcedPlan == nil, let page = try placedListPage(parsed) { return (page, .placedList) }
        // A word with typo expansions near a point: tier by tier, as the words alone are.
        if request.forcedPlan == nil, let page = try placedTierPage(parsed) { return (page, .textThenPlace) }
        // Alternatives within a region, one of them frequent: apart, the frequent one from its placed list.
        if request.forcedPlan == nil, let page = try frequentAlternativePage(parsed) { return (page, .frequentAlternative) }
        // A word with typo expansions (or alternatives) within a region, or nearest first: every row of them there,
        // from their complete placed lists and FTS5.
        if request.forcedPlan == nil, let page = try placedRowsPage(parsed) { return (page, .placedRows) }
        // Too many of them there: tier by tier, each tier's phrases searched alone in the region.
        if request.forcedPlan == nil, let page = try regionTierPage(parsed) { return (page, .typoTiers) }
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
            if scoresPageOnly {
                return (try textPlaces(expression: parsed.expression).compactMap(refine), .textThenPlace)
            }
            if ranksPageInSQL { return (try placedTextPage(expression: parsed.expression).compactMap(refine), .textThenPlace) }
            let matches = try textMatches(expression: parsed.expression, pagedInSQL: false)
            return (matches.compactMap(refine), .textThenPlace)
        case .placeThenText:
            guard let query = try vectorQuery(parsed) else { return ([], .placeThenText) }  // no FTS5 row: nothing matches
            do {
                return (try nearest(textFilter: .vectors(query)), .placeThenText)
            } catch let error as DatabaseError where error.message == SEARCHLIGHT_VECTOR_FALLBACK_LIMIT {
                // Rows the vectors cannot score (a prefix's term twice at one position, `com.apple.com` for `co*`),
                // each an FTS5 statement: one FTS5 scan instead.
                return (try nearest(textFilter: .intersect(parsed.expression)), .intersection)
            }
        default:
            return (try nearest(textFilter: .intersect(parsed.expression)), .intersection)
        }
    }
}

/// An item a search found, before it is a hit: its place, its score (typo penalties folded in) and its
/// distance. Every backend builds its hits from these, so that hits are made and ordered one way.
package struct SearchCandidate {
    package var id: Int64
    package var uri: String
    package var entity: String
    package var displayName: String
    package var latitude: Double?
    package var longitude: Double?
    package var score: Double = 0
    package var distance: Double?

    /// A candidate.
    package init(id: Int64, uri: String, entity: String, displayName: String, latitude: Double?, longitude: Double?,
                 score: Double = 0, distance: Double? = nil) {
        self.id = id
        self.uri = uri
        self.entity = entity
        self.displayName = displayName
        self.latitude = latitude
        self.longitude = longitude
        self.score = score
        self.distance = distance
    }

    /// The hit. A ranked score (the ranking's, with typos folded in as penalties) reports the typos apart.
    package func hit(ranked: Bool) -> SearchHit {
        let typos = ranked && score < 0 ? Int(min(64, ((SearchIndex.scoreCeiling - score) / SearchIndex.typoPenalty).rounded(.down))) : 0
        var hit = SearchHit(uri: uri, entity: entity, displayName: displayName, score: score + Double(typos) * SearchIndex.typoPenalty,
                            latitude: latitude, longitude: longitude, distance: distance, snippet: nil)
        hit.typos = typos
        return hit
    }
}

extension SearchCandidate {
    /// Whether `a` comes before `b` in the ranking query's order (`ORDER BY score, uri`: best score first,
    /// ties by the URI's bytes), whatever a request sorts by.
    static func ranksBefore(_ a: SearchCandidate, _ b: SearchCandidate) -> Bool {
        a.score != b.score ? a.score > b.score : BinaryCollation.precedes(a.uri, b.uri)
    }
}

extension SearchRequest {
    /// What orders candidates: minus the score for relevance, the distance (missing: last) otherwise.
    package func orderKey(_ candidate: SearchCandidate) -> Double {
        effectiveSort == .relevance ? -candidate.score : candidate.distance ?? .infinity
    }

    /// The positions of candidates that all carry their URIs, in order, ties by URI as SQL breaks them.
    /// Positions are sorted, not candidates: a candidate moved is three strings retained and released
    /// (sorting 30 km of places by moving them took 70% of the search). URIs compare only on ties.
    package func order(of candidates: [SearchCandidate]) -> [Int] {
        let keys = candidates.map(orderKey)
        return candidates.indices.sorted { a, b in
            keys[a] != keys[b] ? keys[a] < keys[b] : BinaryCollation.precedes(candidates[a].uri, candidates[b].uri)
        }
    }

    /// The requested page of candidates that all carry their URIs: in order, ties by URI.
    /// A page that is most of the candidates (every hit within a radius) is put in order in place: a
    /// copy of thousands of candidates is a fresh allocation the allocator maps and unmaps on every search.
    package func page(of candidates: consuming [SearchCandidate]) -> [SearchCandidate] {
        var order = order(of: candidates)
        let end = offset.addingReportingOverflow(limit).overflow ? order.count : min(order.count, offset + limit)
        guard offset < end else { return [] }
        guard end - offset > order.count / 2 else { return order[offset..<end].map { candidates[$0] } }
        // Cycle by cycle: position j takes the candidate at order[j], and order[j] = j marks it placed.
        for start in order.indices where order[start] != start {
            var j = start
            while order[j] != start {
                let k = order[j]
                candidates.swapAt(j, k)
                order[j] = j
                j = k
            }
            order[j] = j
        }
        candidates.removeSubrange(end...)
        candidates.removeSubrange(..<offset)
        return candidates
    }
}
