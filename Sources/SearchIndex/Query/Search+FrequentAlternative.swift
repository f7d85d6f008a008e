import GRDB

/// A group of alternatives within a region, one of them frequent and the others rare (`euroa OR europe`, the
/// one-edit tier of `Europa`): the rare ones' rows in the region scored by the whole group, and the frequent
/// one's best rows there from a search of it alone, which its placed list answers.
///
/// A row holding only the frequent alternative scores what that alternative scores alone: the group's other
/// phrases add nothing to it. Every other row holds a rare alternative, so it is among the rare ones' rows.
/// Scored together, the group scans the region's thousands of places or the frequent word's whole doclist
/// (`Europa` within 50 km of a point in Germany, whose expansion `europe` every place there holds: 7.7–9.2 ms
/// at 940k items).
extension Search {
    /// The page of the query's one group of alternatives (no typo expansions, no excluded terms) within the
    /// request's region, by relevance, taken apart. Nil when leader lists are off, the page is not ranked in SQL,
    /// the most frequent alternative has no placed list or is there twice (its rows score by both copies), the
    /// others hold more than ``mostUnlistedRows`` rows, the region holds fewer places than twice their rows
    /// (or ``fewestPlacesApart``), or the filter keeps few items (``mostFilterItemsScoredWhole``).
    mutating func frequentAlternativePage(_ parsed: ParsedQuery) throws -> [Candidate]? {
        guard request.usesTermLeaders, ranksPageInSQL, request.radius != nil || request.boundingBox != nil,
              parsed.required.count == 1, parsed.required[0].count > 1, parsed.excluded.isEmpty, !parsed.hasExpansions else { return nil }
        let members = parsed.required[0]
        let counts = try members.map { try estimate(tokens: $0.tokens, isPrefix: $0.isPrefix) }
        guard let frequent = counts.indices.max(by: { counts[$0] < counts[$1] }),
              members.filter({ $0.expression == members[frequent].expression }).count == 1 else { return nil }
        let rareRows = counts.reduce(0, +) - counts[frequent]
        guard rareRows <= Self.mostUnlistedRows, let key = members[frequent].leaderKey,
              try TermLeaders.placedListing(key: key, db: db) != nil else { return nil }
        // The rare rows are read from FTS5 twice (≈ 1 µs each in all), where scoring the group whole reads the
        // region's places (≈ 0.65 µs each): apart only when the region holds more.
        let worth = max(Self.fewestPlacesApart, 2 * rareRows)
        guard try countInRegion(cap: worth, radius: request.radius) >= worth, try !filterKeepsFewItems() else { return nil }

        // The rare alternatives' rows in the region (under the request's filters), and the best of them scored by
        // the whole group.
        let rare = "(" + members.indices.filter { $0 != frequent }.map { members[$0].expression }.joined(separator: " OR ") + ")"
        func inRegion(_ expression: String) throws -> Set<Int64> {
            Set(try textPlaces(expression: expression).compactMap(refine).map(\.id))
        }
        let rareIDs = try inRegion(rare)
        var rows = try textMatches(expression: parsed.expression, within: rareIDs.sorted()).compactMap(refine)

        // The frequent alternative's best rows, those of the rare ones left out: it is asked for as many rows more
        // as hold both there, so that its best rows are among them (most rare rows do not hold it, and a page
        // deeper than its placed list's would be scored whole).
        var alone = request
        alone.offset = 0
        alone.limit = needed + (rareIDs.isEmpty ? 0 : try inRegion(rare + " AND " + members[frequent].expression).count)
        var search = Search(db: db, request: alone, parsed: ParsedQuery(required: [[members[frequent]]], excluded: []),
                            predicate: predicate, itemSets: itemSets, recordsStatements: recordsStatements)
        search.keepsFewItems = keepsFewItems  // the same filter: decided once
        let frequentRows = try search.rankedPage()
        record(statementsOf: search)
        rows += frequentRows.filter { !rareIDs.contains($0.id) }
        rows.sort(by: SearchCandidate.ranksBefore)
        return Array(rows.prefix(needed))
    }
}
