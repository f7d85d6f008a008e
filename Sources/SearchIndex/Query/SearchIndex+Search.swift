import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

extension SearchIndex {
    /// Column weights: display name and title above text above keywords. `searchlight_rank` puts a
    /// whole-value match (a name or one alternate name that is all of what was typed) above every partial
    /// match, ordered by the item's static rank; partial matches score BM25F per value, so a long list
    /// of alternate names neither buries nor piles up a match (see README, Relevance).
    package static let columnWeights: [Double] = [10.0, 6.0, 2.0, 1.0]
    static let weights = columnWeights.map { "\($0)" }.joined(separator: ", ")
    /// Its last argument is the query's phrase plan (``ParsedQuery/phrasePlan``), bound before the MATCH
    /// expression: each edit of a typo match costs ``typoPenalty``, more than any score.
    static let rankFunction = "searchlight_rank(items_fts, \(weights), i.rank, i.value_lengths, ?)"
    /// The same, for a query that keeps only its best k rows (its second argument): rows that cannot reach
    /// the k-th best score seen so far are not scored (top-k pruning; the k best come out the same).
    static let topRankFunction = "searchlight_rank(items_fts, \(weights), i.rank, i.value_lengths, ?, ?)"
    /// The same pruning query's function for listing a term (``TermLeaders``): a scored row's score and
    /// instances in one BLOB, a pruned row's bound as a REAL.
    static let leaderRankFunction = "searchlight_leader_rank(items_fts, \(weights), i.rank, i.value_lengths, ?, ?)"
    /// The most rows a query keeps with pruning (the ranking function's own limit).
    static let maximumPrunedPage = 10_000
    /// What one edit subtracts from a score (the ranking function's constant).
    static let typoPenalty = Double(SEARCHLIGHT_TYPO_PENALTY)
    /// The largest score a row reaches without typos, far below one penalty.
    static let scoreCeiling = 1e5

    /// Runs a search in one read transaction.
    public func search(_ request: SearchRequest) throws(SearchIndexError) -> SearchResults {
        let parsed = try Self.validate(request)
        return try read { db in try Self.search(request, parsed: parsed, itemSets: filterItemSets, db: db) }
    }

    /// A search inside a read transaction: the attribute names and entity kinds it checks are those of the
    /// snapshot it searches.
    /// `itemSets`: where the connection keeps the items of filter equalities between searches.
    static func search(_ request: SearchRequest, parsed: ParsedQuery?, itemSets: FilterItemSets?, db: Database) throws -> SearchResults {
        let predicate = try Self.predicate(of: request, db: db)
        let request = try Self.withEntityKinds(request, db: db)
        return try db.withTimeLimit(request.timeLimit) {
            // Typo expansions are looked for once, and only when needed: exact matches rank above every
            // typo match and score as they would alone, so a page they fill is the page. Facets and the
            // total count every match, typo matches included, and expand the query after the page.
            var parsed = parsed
            var expanded = !(request.typoTolerance && parsed?.mayMatchWithTypos == true)
            func expand() throws {
                if !expanded, let typed = parsed { parsed = try Search.expanded(typed, db: db) }
                expanded = true
            }
            var results: SearchResults
            // The plan of words left unexpanded because the region holds no typo neighbour of them.
            var unexpanded: TypoPlan?
            let lazily = request.effectiveSort == .relevance && request.sortAttribute == nil
            if !expanded, lazily {
                var exact = Search(db: db, request: request, parsed: parsed, predicate: predicate, itemSets: itemSets)
                results = try exact.run()
                // A region where no place holds a typo neighbour of a word: no expansion matches there.
                let plan = results.hits.count < request.limit ? parsed.flatMap(TypoPlan.init) : nil
                if let plan, try !exact.regionMayHoldTypoNeighbours(of: plan) {
                    unexpanded = plan
                } else if results.hits.count < request.limit {
                    try expand()
                    if parsed?.hasExpansions == true {
                        var search = Search(db: db, request: request, parsed: parsed, predicate: predicate, itemSets: itemSets)
                        results = try search.run()
                    }
                }
            } else {
                try expand()
                var search = Search(db: db, request: request, parsed: parsed, predicate: predicate, itemSets: itemSets)
                results = try search.run()
            }
            if results.hits.isEmpty, request.offset == 0, let parsed, let query = request.query {
                results.suggestion = try Search.suggestion(for: parsed, query: query, unexpanded: unexpanded, db: db)
            }
            if !request.facets.isEmpty || request.countsTotal {
                try expand()
                var all = Search(db: db, request: request.unpaged, parsed: parsed, predicate: predicate, itemSets: itemSets)
                (results.total, results.facets) = try all.totalAndFacets()
            }
            return results
        }
    }

    /// The number of hits a search has in all (no paging); ``SearchRequest/countsTotal`` gives it with the
    /// page, from the same read transaction.
    public func count(_ request: SearchRequest) throws(SearchIndexError) -> Int {
        let parsed = try Self.validate(request.unpaged)
        return try read { db in try Self.count(request, parsed: parsed, db: db) }
    }

    /// A count inside a read transaction.
    static func count(_ request: SearchRequest, parsed: ParsedQuery?, db: Database) throws -> Int {
        let unpaged = request.unpaged
        let predicate = try Self.predicate(of: unpaged, db: db)
        let widened = try Self.withEntityKinds(unpaged, db: db)
        return try db.withTimeLimit(request.timeLimit) {
            let parsed = try parsed.map { parsed in request.typoTolerance && parsed.mayMatchWithTypos ? try Search.expanded(parsed, db: db) : parsed }
            var search = Search(db: db, request: widened, parsed: parsed, predicate: predicate)
            return try search.count()
        }
    }

    /// The request with its entity filter widened to sub-entities, unless it asks for exact entities.
    static func withEntityKinds(_ request: SearchRequest, db: Database) throws -> SearchRequest {
        guard !request.exactEntities, !request.entities.isEmpty else { return request }
        var widened = request
        widened.entities = try entitiesOfKind(request.entities, db: db)
        return widened
    }

    /// The request's filter, parsed, with every attribute it names checked against the index: a
    /// misspelt attribute is an error that lists the ones the index has, not an empty answer.
    static func predicate(of request: SearchRequest, db: Database) throws -> FilterPredicate? {
        guard request.sortAttribute != nil || !request.facets.isEmpty || request.filter != nil else { return nil }
        return try predicate(of: request, knownAttributes: attributeNames(db))  // one skip-scan for the order, the facets and the filter
    }

    /// The request's filter, parsed, with the attributes it, its order and its facets name checked
    /// against those the index has.
    package static func predicate(of request: SearchRequest, knownAttributes known: Set<String>) throws(SearchIndexError) -> FilterPredicate? {
        let named = Set([request.sortAttribute?.name].compactMap { $0 } + request.facets)
        if let unknown = named.subtracting(known).sorted().first {
            throw SearchIndexError.invalidRequest(.unknownAttribute(name: unknown, use: request.facets.contains(unknown) ? .facet : .sort, known: known.sorted()))
        }
        guard let text = request.filter else { return nil }
        let predicate = try PredicateParser.parse(text, variables: request.filterVariables)
        if let unknown = predicate.attributes.subtracting(known).sorted().first {
            let position = (text.range(of: unknown).map { text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: $0.lowerBound) } ?? 0) + 1
            throw SearchIndexError.invalidPredicate(reason: known.isEmpty
                ? "no item has attribute '\(unknown)': the index's configuration declares none; add \"attributes\": {\"\(unknown)\": \"keyPath\"} to the entity in the configuration and index again"
                : "no item has attribute '\(unknown)'; the index has \(known.sorted().joined(separator: ", "))", position: position)
        }
        return predicate
    }

    /// The names of the attributes items carry (for filters, orders and facets).
    public func attributeNames() throws(SearchIndexError) -> Set<String> {
        try read { db in try Self.attributeNames(db) }
    }

    static func attributeNames(_ db: Database) throws -> Set<String> {
        // A skip-scan over the (name, …) index: one probe per distinct name.
        var names: Set<String> = []
        var last = ""
        while let next = try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM item_attributes WHERE name > ? ORDER BY name LIMIT 1"), arguments: [last]) {
            names.insert(next)
            last = next
        }
        return names
    }

    package static func validate(_ request: SearchRequest) throws(SearchIndexError) -> ParsedQuery? {
        let parsed = try request.query.map { text throws(SearchIndexError) in try QueryParser.parse(text, lastWordIsPrefix: request.lastWordIsPrefix) }
        if parsed == nil && request.near == nil && request.boundingBox == nil && request.filter == nil {
            throw .invalidRequest(.nothingToSearch)
        }
        if request.radius != nil && request.near == nil {
            throw .invalidRequest(.radiusWithoutCenter)
        }
        if let radius = request.radius, !(radius.isFinite && radius >= 0) {
            throw .invalidLocation(reason: "the radius must be a distance of 0 or more")
        }
        if request.effectiveSort == .relevance && parsed == nil && request.filter == nil {
            throw .invalidRequest(.relevanceWithoutWords)
        }
        guard request.limit >= 1 else { throw .invalidRequest(.limitBelowOne) }
        guard request.offset >= 0 else { throw .invalidRequest(.negativeOffset) }
        return parsed
    }
}
