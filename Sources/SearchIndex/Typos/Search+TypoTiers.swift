import GRDB

/// A word's typo expansions searched tier by tier: exact matches, then one edit, then two.
///
/// Every edit costs more than any score, so a page is the word's own matches, then the best rows of the
/// one-edit tier, then of the two-edit tier. Scoring the word and all its expansions at once scores every
/// row of a frequent expansion, and a penalty-blind pruning bound cannot stop early: `europa` (16 places)
/// expands to `europe` (408,720 places, their time zone), 130 ms at 940k items. Tier by tier, each tier's
/// rows compete only with each other, so pruning works as for an exact word, and an expansion with a leader
/// list (``TermLeaders``) is answered from its list:
/// - a listed term's row that holds no other phrase of its tier nor of a tier before scores exactly what
///   the list scores for the term alone, less the tier's penalty (only a word's closest alternatives count);
/// - the other phrases' rows, and the rows holding two listed terms, are scanned once and scored by every
///   phrase of the tier: `(steering) AND (the tier's phrases)` visits only the former, seeking through the
///   lists' large doclists; the steering phrases never count (`x` in the phrase plan), and the listed terms'
///   row counts are given to the ranking (`@n`) so that it does not walk their doclists to count them.
/// A tier with a listed term answers only when its last row needed beats every row its lists left off,
/// as a list alone does; otherwise the search scores every row, as before.
extension Search {
    /// The most listed terms a tier may have: their pairs are steering phrases of its scan.
    static let mostListedPerTier = 6

    /// The page `offset..<offset + limit` of a search for one group of terms with typo expansions (the
    /// query's excluded terms left out of every tier), from its tiers; nil when a tier's lists cannot prove
    /// the page (it is then scored whole).
    mutating func typoTierPage(of group: [ParsedQuery.Term], offset: Int, limit: Int) throws -> [Candidate]? {
        let needed = offset + limit
        let alternatives = group.flatMap(\.alternatives)
        let excluded = parsed?.excluded.map(\.expression) ?? []
        var found: [Candidate] = []
        // The phrases of the tiers done (their rows all in `found`), which later tiers leave out.
        var lower: [Int] = [], lowerIDs: Set<Int64> = []
        for edits in Set(alternatives.map(\.edits)).sorted() {
            let members = alternatives.indices.filter { alternatives[$0].edits == edits }
            let wanted = needed - found.count
            let penalty = SearchIndex.typoPenalty * Double(edits)
            var listed: [(index: Int, listing: TermLeaders.Listing)] = [], rest: [Int] = []
            for index in members {
                if let key = alternatives[index].term.leaderKey, let listing = try TermLeaders.listing(key: key, plan: "0:0", db: db),
                   listing.bound != nil {
                    record(TermLeaders.listSQL, [key])
                    listed.append((index, listing))
                } else {
                    rest.append(index)
                }
            }
            func phrase(_ index: Int) -> String { alternatives[index].term.expression }
            func either(_ phrases: [String]) -> String { "(" + phrases.joined(separator: " OR ") + ")" }
            func either(_ indices: [Int]) -> String { either(indices.map(phrase)) }
            // The tiers before and the query's excluded terms, left out (in the plan: each "-").
            let leftOut = lower.map(phrase) + excluded
            let exclusion = leftOut.isEmpty ? "" : " NOT " + either(leftOut)
            let leftOutPlan = leftOut.map { _ in "-" }
            let listedIndices = listed.map(\.index)

            var tier: [Candidate] = []
            // The tier's rows that a list may not score as it does: those holding another phrase of the tier.
            var scanned: Set<Int64> = []
            var restExhausted = true
            if listed.isEmpty {
                // The tier's rows, the page's worth of them.
                let plan = (rest.map { _ in "0:\(edits)" } + leftOutPlan).joined(separator: " ")
                let rows = try tierRows(expression: either(rest) + exclusion, plan: plan, keep: wanted)
                restExhausted = rows.count < wanted
                tier = rows
            } else {
                // The rows of the other phrases and those holding two listed terms, scored by every phrase of the
                // tier: `(steering) AND (the tier's phrases)` visits only the first, seeking through the lists'
                // large doclists, and the steering phrases do not count. Their ids, unscored, tell the lists'
                // rows apart from them.
                guard listed.count <= Self.mostListedPerTier else { return nil }
                // A listed phrase twice in the tier (`sainx OR saitn` both expand to `saint`) pairs with itself:
                // its rows, which the ranking scores by both copies, are all scanned, none taken from its list.
                var steering = rest.map(phrase)
                for (position, first) in listedIndices.enumerated() {
                    for second in listedIndices[(position + 1)...] { steering.append("(\(phrase(first)) AND \(phrase(second)))") }
                }
                if !steering.isEmpty {
                    let steeringPhrases = rest.count + listed.count * (listed.count - 1)
                    let documents = Dictionary(uniqueKeysWithValues: listed.map { ($0.index, $0.listing.documents) })
                    let plan = (Array(repeating: "x@0", count: steeringPhrases) + members.map { "0:\(edits)" + (documents[$0].map { "@\($0)" } ?? "") }
                                + leftOutPlan).joined(separator: " ")
                    let expression = "((" + steering.joined(separator: " OR ") + ") AND " + either(members) + ")" + exclusion
                    tier = try tierRows(expression: expression, plan: plan, keep: wanted)
                    let sql = "SELECT rowid FROM items_fts WHERE items_fts MATCH ?"
                    record(sql, [expression])
                    scanned = Set(try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: [expression]))
                }
            }

            // The listed terms' rows that hold no other phrase of this tier or of one before, nor an excluded
            // term: as listed.
            var excludedIDs: Set<Int64> = []
            if !excluded.isEmpty, !listed.isEmpty {
                let ids = Array(Set(listed.flatMap { $0.listing.rows.map(\.id) }))
                let sql = "SELECT rowid FROM items_fts WHERE items_fts MATCH ? AND rowid IN (\(databaseQuestionMarks(count: ids.count)))"
                let arguments: StatementArguments = [either(excluded)] + StatementArguments(ids)
                record(sql, arguments)
                excludedIDs = Set(try Int64.fetchAll(db, sql: sql, arguments: arguments))
            }
            for (_, listing) in listed {
                for var row in listing.rows where !scanned.contains(row.id) && !lowerIDs.contains(row.id) && !excludedIDs.contains(row.id) {
                    row.score -= penalty
                    tier.append(row)
                }
            }
            // The ranking query's order, whatever the request sorts by (a text page is ranked in SQL).
            tier.sort(by: SearchCandidate.ranksBefore)

            if listed.isEmpty && restExhausted {
                // Every row of the tier: the next tier leaves them out.
                found += tier.prefix(wanted)
                if tier.count >= wanted { break }
                lower += members
                lowerIDs.formUnion(tier.map(\.id))
                continue
            }
            guard tier.count >= wanted else { return nil }
            let last = tier[wanted - 1]
            guard listed.allSatisfy({ $0.listing.leavesOffAfter(score: last.score, uri: last.uri, penalty: penalty) }) else { return nil }
            found += tier.prefix(wanted)
            break
        }
        guard offset < found.count else { return [] }
        return Array(found[offset..<min(found.count, needed)])
    }

    /// The page of a word with typo expansions (or of alternatives) near a point, with no radius nor box, by
    /// relevance: every placed match is a hit, so the page is the first `needed` placed rows of the tiers' own
    /// order, asked of them with room for rows that have no place. Nil when the tiers cannot prove their page,
    /// or too many of its rows have no place: the region's rows are then scored. `Europa` near Rome, whose
    /// expansion `europe` 408,720 places hold (their time zone), scored every match in 209 ms (940k items).
    mutating func placedTierPage(_ parsed: ParsedQuery) throws -> [Candidate]? {
        guard request.usesTermLeaders, ranksPageInSQL, request.near != nil, request.radius == nil, request.boundingBox == nil,
              itemFilter(probing: true).sql.isEmpty, let group = parsed.typoTieredGroup else { return nil }
        let asked = min(SearchIndex.maximumPrunedPage, 2 * needed)
        guard let rows = try typoTierPage(of: group, offset: 0, limit: asked) else { return nil }
        let placed = rows.compactMap(refine)
        // Enough of them placed, or every match read (fewer rows than asked).
        guard placed.count >= needed || rows.count < asked else { return nil }
        return Array(placed.prefix(needed))
    }

    /// The fewest places a region holds for a search within it to be taken apart, tier by tier or alternative by
    /// alternative: each part is a search of its own, and fewer places are scored whole from their term vectors
    /// (≈ 0.65 µs each) in less time (`santa` within 50 km of a point in Argentina, 41 places: 2.6 ms whole, 5.0
    /// in tiers at 940k items).
    static let fewestPlacesApart = 1_000

    /// The page of a word with typo expansions (or of alternatives) within a region, by relevance, tier by tier:
    /// each tier's phrases searched alone in the region, as an exact query of their own that any plan may answer
    /// (one frequent expansion from its placed list), less the tier's penalty, the rows of the tiers before left
    /// out. Nil when the group has one tier, the query excludes terms (a word with exclusions has no list to
    /// answer from), the region holds fewer than ``fewestPlacesApart`` places, the filter keeps few items
    /// (``mostFilterItemsScoredWhole``), or a tier's last row needed ties with the next once penalized.
    /// `Europa` within 50 km of a point in Germany, whose expansion `europe` every place there holds (their time
    /// zone), scored them all: 7.7–9.2 ms at 940k items.
    ///
    /// A row of a tier holds no phrase of a tier before, so its best phrases are the tier's own: it scores what
    /// the tier's phrases score alone, less the tier's penalty, and every row of a tier before scores more. The
    /// tiers before are complete (fewer rows than the page), so a tier is asked for the whole page: its best
    /// rows are among them once the rows of the tiers before are left out.
    mutating func regionTierPage(_ parsed: ParsedQuery) throws -> [Candidate]? {
        guard request.usesTermLeaders, ranksPageInSQL, request.radius != nil || request.boundingBox != nil,
              parsed.excluded.isEmpty, let group = parsed.typoTieredGroup else { return nil }
        let alternatives = group.flatMap(\.alternatives)
        let tiers = Set(alternatives.map(\.edits)).sorted()
        guard tiers.count > 1, try countInRegion(cap: Self.fewestPlacesApart, radius: request.radius) >= Self.fewestPlacesApart,
              try !filterKeepsFewItems() else { return nil }
        var found: [Candidate] = [], lowerIDs: Set<Int64> = []
        for edits in tiers {
            let wanted = needed - found.count
            // One row more than the page: two base scores a few ulps apart can be equal once the penalty is
            // subtracted, and then their URIs order them, not the tier's own order.
            var tierRequest = request
            tierRequest.offset = 0
            tierRequest.limit = needed + 1
            // The tier's phrases as typed words, in their order (a phrase twice stays twice: a row holding it
            // scores by both copies, as in the whole query).
            let members = alternatives.filter { $0.edits == edits }.map { alternative in
                var term = alternative.term
                term.expansions = []  // a word as typed is its tier's alternative, without the expansions it carries
                return term
            }
            var tier = Search(db: db, request: tierRequest, parsed: ParsedQuery(required: [members], excluded: []),
                              predicate: predicate, itemSets: itemSets, recordsStatements: recordsStatements)
            tier.keepsFewItems = keepsFewItems  // the same filter: decided once
            var rows = try tier.rankedPage()
            record(statementsOf: tier)
            rows.removeAll { lowerIDs.contains($0.id) }
            let penalty = SearchIndex.typoPenalty * Double(edits)
            if rows.count > wanted, rows[wanted].score != rows[wanted - 1].score, rows[wanted].score - penalty == rows[wanted - 1].score - penalty {
                return nil
            }
            for index in rows.indices { rows[index].score -= penalty }
            found += rows.prefix(wanted)
            if found.count >= needed { break }
            // Fewer than the page: every row of the tier in the region, which the next tiers leave out.
            lowerIDs.formUnion(rows.map(\.id))
        }
        return found
    }

    /// The best `keep` rows matching `expression`, scored with `plan`, in order.
    private mutating func tierRows(expression: String, plan: String, keep: Int) throws -> [Candidate] {
        let arguments: StatementArguments = [plan, keep, expression, keep]
        record(Self.tierSQL, arguments)
        return try rankedCandidates(Row.fetchAll(db.cachedStatement(sql: Self.tierSQL), arguments: arguments))
    }

    /// A tier's best rows (what `explain` shows of a search answered tier by tier).
    static let tierSQL = """
        SELECT i.id, i.uri, i.entity, i.display_name, i.latitude, i.longitude, \(SearchIndex.topRankFunction) AS score
        FROM items_fts JOIN items i ON i.id = items_fts.rowid
        WHERE items_fts MATCH ? ORDER BY score, i.uri LIMIT ?
        """
}
