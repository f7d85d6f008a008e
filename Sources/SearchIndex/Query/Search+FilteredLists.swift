import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite

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
        guard budget > 0, let query = try vectorQuery(parsed) else { return nil }
        let statement = try scoredRowStatement(reading: "each listed row the filter may keep")
        var page: [Candidate] = [], reads = 0
        let needed = needed
        func kept(_ id: Int64) -> Bool {
            guard let ids else { return true }
            var low = 0, high = ids.count
            while low < high {
                let middle = (low + high) / 2
                if ids[middle] < id { low = middle + 1 } else { high = middle }
            }
            return low < ids.count && ids[low] == id
        }
        func read(_ id: Int64) throws -> Bool {
            reads += 1
            guard reads <= budget else { return false }
            switch try Self.readScoredRow(id, with: statement, db: db) {
            case .filteredOut: return true
            case .unmatched: return false  // the list is not what it says
            case .scored(let candidate):
                guard let candidate = refine(candidate) else { return true }
                let position = page.firstIndex { SearchCandidate.ranksBefore(candidate, $0) } ?? page.endIndex
                if position < needed {
                    page.insert(candidate, at: position)
                    if page.count > needed { page.removeLast() }
                }
                return true
            }
        }
        func walk() throws -> Bool {
            try SQLiteCall.withVectorQuery(query.pointer, boundTo: statement, parameter: 1) {
                let answer = try list.walk(db: db) { entry in
                    // Every row further down scored at most this one when listed.
                    if page.count == needed, let last = page.last, list.precedes(last.score, rowsListedAtMost: Double(entry.score)) { return true }
                    guard kept(entry.id) else { return nil }
                    return try read(entry.id) ? nil : false
                }
                if let answer { return answer }
                guard let threshold = list.drift.threshold else { return true }
                if page.count == needed, let last = page.last, list.precedes(last.score, rowsListedAtMost: threshold) { return true }
                // The rows left off, from the tail: every one the filter may keep is read.
                var left: [Int64] = []
                let walked = try list.walkTail(db: db) { id, _, _ in
                    if kept(id) { left.append(id) }
                    return reads + left.count <= budget
                }
                guard walked == true else { return false }
                for id in left.sorted() where try !read(id) { return false }
                return true
            }
        }
        do {
            return try walk() ? page : nil
        } catch let error as DatabaseError where error.message == SEARCHLIGHT_VECTOR_FALLBACK_LIMIT {
            // Rows the vectors cannot score: one FTS5 scan instead.
            return nil
        }
    }
}
