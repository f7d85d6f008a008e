import GRDB

/// A group of alternatives within a region, one of them frequent and the others rare (`euroa OR europe`, the
/// one-edit tier of `Europa`): the rare ones' rows in the region scored by the whole group, and the frequent
/// one's best rows there from a search of it alone, which its placed list answers.
///
/// A row holding only the frequent alternative scores what that alternative scores alone: the group's other
/// phrases add nothing to it. Every other row holds a rare alternative, so it is among the rare ones' rows.
/// The frequent one's search is asked for as many rows more as the rare ones hold in the region, so that its
/// best rows are among them once those are left out. Scored together, the group scans the region's thousands
/// of places or the frequent word's whole doclist (`Europa` within 50 km of a point in Germany, whose
/// expansion `europe` holds every place there: 7.7 ms at 940k items).
extension Search {
    /// The page of the query's one group of alternatives (no typo expansions) within the request's region, by
    /// relevance, taken apart; nil when the group has no alternative with a placed list, the others hold more
    /// than ``mostUnlistedRows`` rows, or the frequent one is there twice (its rows score by both copies).
    mutating func frequentAlternativePage(_ parsed: ParsedQuery) throws -> [Candidate]? {
        guard request.usesTermLeaders, ranksPageInSQL, request.radius != nil || request.boundingBox != nil,
              parsed.required.count == 1, parsed.required[0].count > 1, !parsed.hasExpansions else { return nil }
        let members = parsed.required[0]
        let counts = try members.map { try estimate(tokens: $0.tokens, isPrefix: $0.isPrefix) }
        guard let frequent = counts.indices.max(by: { counts[$0] < counts[$1] }),
              members.filter({ $0.expression == members[frequent].expression }).count == 1,
              counts.reduce(0, +) - counts[frequent] <= Self.mostUnlistedRows,
              let key = members[frequent].leaderKey, try TermLeaders.placedListing(key: key, db: db) != nil else { return nil }

        // The rare alternatives' rows in the region (under the request's filters), and the best of them scored by
        // the whole group.
        let rare = members.indices.filter { $0 != frequent }.map { members[$0].expression }
        var expression = "(" + rare.joined(separator: " OR ") + ")"
        if !parsed.excluded.isEmpty { expression += " NOT (" + parsed.excluded.map(\.expression).joined(separator: " OR ") + ")" }
        let inRegion = try textPlaces(expression: expression).filter { request.placement(latitude: $0.latitude, longitude: $0.longitude) != nil }
        let rareIDs = Set(inRegion.map(\.id))
        var rows = try textMatches(expression: parsed.expression, within: rareIDs.sorted()).compactMap(refine)

        // The frequent alternative's best rows, those of the rare ones left out.
        var alone = request
        alone.offset = 0
        alone.limit = needed + rareIDs.count
        var search = Search(db: db, request: alone, parsed: ParsedQuery(required: [[members[frequent]]], excluded: parsed.excluded),
                            predicate: predicate, itemSets: itemSets, recordsStatements: recordsStatements)
        let frequentRows = try search.orderedPage()
        record(statementsOf: search)
        rows += frequentRows.filter { !rareIDs.contains($0.id) }
        rows.sort(by: SearchCandidate.ranksBefore)
        return Array(rows.prefix(needed))
    }
}
