import Foundation

/// One frequent word, prefix or phrase under an attribute filter, anywhere, from its placed list when the list
/// holds every row of its key (every row has a place): the list's rows best first, each read under the filter
/// and scored from its term vector, until the page's last score beats what any row further down can score now.
///
/// A frequent word in a country is among the country's best rows at the top of the word's list: `new` in the
/// United States (14,000 of its 39,872 rows) scored every one of them, 29 ms at 939,632 places, where its page
/// is proven by its best few dozen rows. A filter keeping few of the word's rows leaves most rows read for
/// nothing: the walk gives up after a budget of reads (a few of the other plans' cost), or checks each row
/// against the filter's items first when a search on this connection has read them (``FilterItemSets``).
extension Search {
    /// The page of the query's one word, prefix or phrase under the request's filter, by relevance and with no
    /// place filter, when its placed list proves it; nil otherwise (no list or a stale one, a row without a place,
    /// a page deeper than ``TermLeaders/maximumPlacedPage``, more reads than the budget). `among`: the items the
    /// filter's driving comparison keeps, sorted, when known; a row outside them is not read. `matches`: the
    /// words' estimated rows, which probing would cost 0.45 µs each.
    mutating func filteredListPage(_ parsed: ParsedQuery, among ids: [Int64]?, matches: Int) throws -> [Candidate]? {
        guard request.usesTermLeaders, request.effectiveSort == .relevance, request.sortAttribute == nil,
              request.near == nil, request.boundingBox == nil, needed <= TermLeaders.maximumPlacedPage, let key = parsed.leaderKey,
              let list = try TermLeaders.placedListing(key: key, db: db), list.isComplete,
              list.entries == Int64(list.drift.documents) else { return nil }
        // A read costs about 2 µs: without the items, at most an eighth of what probing every row would.
        let budget = ids == nil ? min(Self.maximumPlacedReads, matches / 8) : Self.maximumPlacedReads
        guard budget > 0 else { return nil }
        return try walkedPage(list, parsed, reading: "each listed row the filter may keep", budget: budget, among: ids)
    }
}
