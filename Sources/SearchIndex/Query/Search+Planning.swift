import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

/// Choosing a plan: estimated match counts of words and prefixes, and the cheapest way to the page.
extension Search {
    /// The plan for words and a place with the least estimated work, in microseconds measured with
    /// `searchbench plans` and `searchbench query` with a forced plan at 939,632 items: a text match joined
    /// to its item and scored ≈ 1.8; a doclist entry scanned ≈ 0.03 (a prefix's, merged from every term it
    /// covers, ≈ 0.1); a match joined to its item and its place checked before any scoring, for a page ranked in
    /// SQL, ≈ 0.3 (`santa`, 7,688 matches, none within 300 km of Canberra: 1.95 ms; a prefix's ≈ 0.8, `Re*`:
    /// 14,096 matches, 11.7 ms);
    /// an R-tree id read, sorted and looked up in the scan ≈ 0.15 (`Hen*` within 100 km: 11,500 places, 1.9 ms);
    /// a place checked and scored from its term vector ≈ 0.65 with its R-tree row (`city` within 50 km of
    /// Mexico City: 3,565 places, 2.4 ms), after FTS5 counts the rows of each phrase that has no leader list (a
    /// scan of its doclist).
    mutating func cheapestPlan(_ parsed: ParsedQuery, bounded: Bool) throws -> SearchPlan {
        let textEstimate = try matchEstimate ?? estimate(parsed)
        matchEstimate = textEstimate
        let total = max(1, try estimatedItemCount())
        let hasPrefix = parsed.hasPrefix
        let scanPerMatch = hasPrefix ? 0.1 : 0.03
        // What text-then-place costs a match before scoring: ranked in SQL, only the region's rows are scored
        // (the overlap's, added below); otherwise every match is scored (ordered by distance, it reads every
        // match's place and scores the page only).
        let textThenPlacePerMatch = ranksPageInSQL ? (hasPrefix ? 0.8 : 0.3) : scoresPageOnly ? 0.4 : 1.8
        // Unbounded (nearest first), circles grow until they hold enough matches: spread evenly, about
        // needed × total ÷ matches places. Words cluster (a word belongs to a language; `north` by distance
        // grew the circle for 150 ms where scoring every match took 7), so forty times `needed` is assumed:
        // a growing plan is chosen only when it wins by a wide margin. In floating point: an unpaged request
        // (a count, facets) needs Int.max hits.
        // Counted up to where the places alone cost more than text-then-place's matches (1.8 ÷ 0.15 = 12 places
        // a match when every match is scored, under 2 for a page ranked in SQL): past it, only text-then-place
        // can win, and counting on (≈ 0.05 a place) would cost more than deciding.
        let cap = Int(min(Double(Int.max / 2), Double(textEstimate) * max(1, (textThenPlacePerMatch - scanPerMatch) / 0.15)))
        let placeCount = bounded ? try countInRegion(cap: cap + 1, radius: request.radius)
            : Int(min(Double(total), 40 * Double(needed) * Double(max(1, total / max(1, textEstimate)))))
        let overlap = Double(textEstimate) * Double(placeCount) / Double(total)
        let scan = Double(textEstimate) * scanPerMatch
        let textThenPlace = textThenPlacePerMatch * Double(textEstimate) + (ranksPageInSQL ? 1.8 * overlap : 0)
        let intersection = (bounded ? 1 : 4) * scan + 0.15 * Double(placeCount) + 1.8 * overlap
        // Growing circles read their places again each round, and words cluster (a word absent near the
        // point grows the circle towards the whole planet): four times, as the intersection's scan.
        var placeThenText = (bounded ? 1 : 4) * 0.65 * Double(placeCount)
        // The counting it needs is estimated only when it may win (each estimate reads the vocabulary).
        if placeThenText < min(textThenPlace, intersection) { placeThenText += try uncountedPhrasesCost(parsed) }
        let costs: [(SearchPlan, Double)] = [(.textThenPlace, textThenPlace), (.placeThenText, placeThenText), (.intersection, intersection)]
        return costs.min { $0.1 < $1.1 }?.0 ?? .intersection
    }

    /// What counting the rows of the query's phrases that have no leader list costs (µs): a term-vector search
    /// needs every phrase's count, and FTS5 counts by walking the phrase's doclist.
    mutating func uncountedPhrasesCost(_ parsed: ParsedQuery) throws -> Double {
        let terms = parsed.required.joined().flatMap { $0.alternatives.map(\.term) }
        let listed = request.usesTermLeaders ? try TermLeaders.documents(ofKeys: parsed.leaderKeys, db: db) : [:]
        var cost = 0.0
        for term in terms where term.leaderKey.flatMap({ listed[$0] }) == nil {
            cost += Double(try estimate(tokens: term.tokens, isPrefix: term.isPrefix)) * (term.isPrefix ? 0.1 : 0.03)
        }
        return cost
    }

    /// An upper-bound-ish estimate of how many items the query matches, from FTS5's vocabulary: per
    /// group of alternatives (a word and its typo expansions) the sum of their document counts, the
    /// smallest group's sum for the query.
    mutating func estimate(_ parsed: ParsedQuery) throws -> Int {
        // Without prefixes, the first 2,000 matches of the expression itself, extrapolated over the row
        // ids when there are more: a few dozen microseconds, where fts5vocab counts by scanning the
        // doclist (7 ms for a word in 408,720 items). A prefix is merged from all its terms before its
        // first row, so it is counted from its leader list or the vocabulary.
        // One group of alternatives whose every word, prefix or phrase has a leader list: the sum of their exact
        // counts. A sample misjudges a word that clusters in row ids (`city`, 63,684 places, was estimated at
        // a fifth of that, and `city` nearest-first read every match's place: 22 ms where the R-tree's
        // circles take 2.5).
        if request.usesTermLeaders, parsed.required.count == 1, parsed.excluded.isEmpty {
            let keys = Set(parsed.required[0].flatMap { $0.alternatives.compactMap(\.term.leaderKey) })
            // Every alternative a word, prefix or phrase with its own list (a repeated one falls back to the sample).
            if keys.count == parsed.phraseCount {
                let counts = try TermLeaders.documents(ofKeys: keys, db: db)
                if counts.count == keys.count { return counts.values.reduce(0, +) }
            }
        }
        if !parsed.hasPrefix {
            let sample = 2_000
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*), MAX(rowid) FROM (SELECT rowid FROM items_fts WHERE items_fts MATCH ? LIMIT ?)"),
                                       arguments: [parsed.expression, sample])
            let count = try row?.integer(0) ?? 0, last = try row?.optionalNumber(1) ?? 0
            guard count >= sample, last > 0 else { return Int(count) }
            return Int(Double(sample) * Double(try estimatedItemCount()) / last)
        }
        var groupEstimates: [Int] = []
        for group in parsed.required {
            var sum = 0
            for term in group {
                sum += try estimate(tokens: term.tokens, isPrefix: term.isPrefix)
                for expansion in term.expansions { sum += try estimate(tokens: [expansion.term], isPrefix: expansion.isPrefix) }
            }
            groupEstimates.append(sum)
        }
        return groupEstimates.min() ?? 0
    }

    /// The documents of a term's rarest token (a prefix's: of every term it covers, up to 5,000 terms).
    mutating func estimate(tokens: [String], isPrefix: Bool) throws -> Int {
        var estimate = Int.max
        for (index, token) in tokens.enumerated() {
            let count: Int
            let isLastPrefix = isPrefix && index == tokens.count - 1
            if request.usesTermLeaders, let key = TermLeaders.key(token: token, isPrefix: isLastPrefix),
               let listed = try TermLeaders.documents(ofKey: key, db: db) {
                // A leader list's count is exact and free; the vocabulary counts by scanning doclists (every
                // term of `san*`'s: `San*` within 100 km, 10.4 → 8.7 ms at 940k items).
                count = listed
            } else if isLastPrefix {
                count = try Int.fetchOne(db.cachedStatement(sql: "SELECT SUM(doc) FROM (SELECT doc FROM items_vocab WHERE term >= ? AND term <= ? LIMIT 5000)"),
                                         arguments: [token, token + "\u{10FFFF}"]) ?? 0
            } else {
                count = try Int.fetchOne(db.cachedStatement(sql: "SELECT doc FROM items_vocab WHERE term = ?"), arguments: [token]) ?? 0
            }
            estimate = min(estimate, count)
        }
        return estimate == Int.max ? 0 : estimate
    }

    // MARK: Filter
}
