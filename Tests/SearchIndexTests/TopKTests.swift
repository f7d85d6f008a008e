import Foundation
@testable import SearchIndex
import SeededRandom
import Testing

/// Top-k pruning in the ranking must never change a page: every page equals the same slice of the fully
/// scored, fully sorted answer.
@Suite("Top-k pruning")
struct TopKTests {
    @Test("pages of words, prefixes, typos, phrases and alternatives equal the fully scored answer's slices")
    func pagesEqualFullScoring() throws {
        let index = try PreparedItemTests.newIndex("topk")
        var generator = SeededGenerator(seed: 17)
        // Few words, many items: every query matches hundreds of rows of all ranks, whole values and partial.
        let words = ["san", "santa", "jose", "juan", "maria", "city", "new", "york", "port", "saint", "sankt", "joseph"]
        let items = (0..<3_000).map { key in
            let name = (0..<Int.random(in: 1...3, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "" }.joined(separator: " ")
            let alternates = (0..<Int.random(in: 0...3, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "" }
            return IndexedItem(uri: "x-coredata://STORE-A/Place/p\(key)", entity: key % 7 == 0 ? "Country" : "Place", displayName: name,
                               text: alternates, rank: [0, 1, 500, 20_000, 3_000_000].randomElement(using: &generator) ?? 0)
        }
        try index.apply(IndexBatch(prepared: items.map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        for query in ["san", "san*", "sa*", "jose", "josé", "saintt", "juan OR maria", "\"new york\"", "city -port", "santa maria", "josep"] {
            var all = SearchRequest(query: query, limit: 100_000)  // beyond the pruned page size: every row scored
            let full = try index.search(all).hits.map { "\($0.uri) \($0.score)" }
            #expect(full.count > 20, "\(query)")
            for (limit, offset) in [(1, 0), (5, 0), (20, 0), (20, 3), (7, 40)] {
                all.limit = limit
                all.offset = offset
                let page = try index.search(all).hits.map { "\($0.uri) \($0.score)" }
                #expect(page == Array(full.dropFirst(offset).prefix(limit)), "\(query) limit \(limit) offset \(offset)")
            }
            var entity = SearchRequest(query: query, entities: ["Country"], limit: 100_000)
            let countries = try index.search(entity).hits.map { "\($0.uri) \($0.score)" }
            entity.limit = 5
            #expect(try index.search(entity).hits.map { "\($0.uri) \($0.score)" } == Array(countries.prefix(5)), "\(query) countries")
        }
    }
}
