import Foundation
@testable import SearchIndex
import SeededRandom
import Testing

/// What `searchlight_rank` promises: a whole-value match (a name, one alternate name, one tag that is all
/// of what was typed) outranks every partial match, the more important item (static rank) first, and a
/// long list of values neither dilutes nor piles up a match.
@Suite("Relevance")
struct RelevanceTests {
    static func index(_ items: [IndexedItem]) throws -> SearchIndex {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("r.searchindex").path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: items, checkpoint: IndexFixtures.checkpoint(1)))
        return index
    }

    static func item(_ key: Int, _ name: String, title: String = "", text: [String] = [], keywords: [String] = [], rank: Double = 0) -> IndexedItem {
        IndexedItem(uri: "x-coredata://STORE-A/Place/p\(key)", entity: "Place", displayName: name, title: title, text: text, keywords: keywords, rank: rank)
    }

    static func order(_ index: SearchIndex, _ query: String) throws -> [Int] {
        try index.search(SearchRequest(query: query, limit: 100)).hits.compactMap { Int($0.uri.split(separator: "p").last ?? "") }
    }

    @Test("the important place called so beats the small place named so, and both beat partial matches")
    func wholeValues() throws {
        let index = try Self.index([
            Self.item(1, "Roma", text: ["Roma"], rank: 14_000),                                  // Roma, Lesotho
            Self.item(2, "Rome", text: ["Roma", "Rom", "Rzym", "Città eterna"], rank: 2_300_000),
            Self.item(3, "Roma Termini station", rank: 10_000_000),                               // bigger, partial
            Self.item(4, "Via Roma", text: Array(repeating: "filler", count: 300) + ["Roma"], rank: 5_000), // long list
        ])
        #expect(try Self.order(index, "roma") == [2, 1, 4, 3])
        // Among equal ranks the name's whole value outranks the alternate name's: name > title > text > keywords.
        let fields = try Self.index([
            Self.item(1, "Other", keywords: ["Lyon"], rank: 100), Self.item(2, "Other", text: ["Lyon"], rank: 100),
            Self.item(3, "Other", title: "Lyon", rank: 100), Self.item(4, "Lyon", rank: 100),
        ])
        #expect(try Self.order(fields, "lyon") == [4, 3, 2, 1])
    }

    @Test("a long list of values neither dilutes nor piles up a match: one value counts")
    func longLists() throws {
        let index = try Self.index([
            Self.item(1, "A", text: ["Saint Petersburg"]),
            Self.item(2, "B", text: (0..<400).map { "name\($0)" } + ["Saint Petersburg"]),
            Self.item(3, "C", text: ["Petersburg", "Petersburg", "Petersburg", "Saint"]),
        ])
        let hits = try index.search(SearchRequest(query: "saint petersburg", limit: 10)).hits
        #expect(hits.count == 3)
        // The two items holding the whole value score the same, whatever else they hold; the scattered
        // words of item 3 come last.
        #expect(Set(hits.prefix(2).map(\.uri)) == ["x-coredata://STORE-A/Place/p1", "x-coredata://STORE-A/Place/p2"])
        #expect(hits[0].score == hits[1].score && hits[2].uri.hasSuffix("/p3"))
    }

    @Test("300 random indexes and queries: whole-value matches first, ordered by exact weight × (1 + log10(1 + rank)), as brute force computes")
    func randomOrders() throws {
        var generator = SeededGenerator(seed: 2027)
        let words = ["san", "jose", "santa", "ana", "rosa", "maria", "del", "mar", "rio", "sol"]
        let exactWeights = [1.0, 0.9, 0.8, 0.7]
        for round in 0..<300 {
            func value() -> String {
                (0..<Int.random(in: 1...3, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "san" }.joined(separator: " ")
            }
            let items = (1...12).map { key in
                Self.item(key, value(), title: Bool.random(using: &generator) ? value() : "",
                          text: (0..<Int.random(in: 0...4, using: &generator)).map { _ in value() },
                          keywords: (0..<Int.random(in: 0...2, using: &generator)).map { _ in value() },
                          rank: Bool.random(using: &generator) ? Double(Int.random(in: 0...5_000_000, using: &generator)) : 0)
            }
            let index = try Self.index(items)
            let query = (0..<Int.random(in: 1...2, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "san" }.joined(separator: " ")
            let queryWords = query.split(separator: " ").map(String.init)
            // Brute force: an item's best whole value, in field order; whole means the value's words are
            // exactly covered by the query's words and hold every one of them.
            func wholeScore(_ item: IndexedItem) -> Double? {
                let fields: [[String]] = [[item.displayName], item.title.isEmpty ? [] : [item.title], item.text, item.keywords]
                var best: Double?
                for (column, values) in fields.enumerated() {
                    for value in values {
                        let valueWords = value.split(separator: " ").map(String.init)
                        if Set(valueWords).isSubset(of: queryWords) && Set(queryWords).isSubset(of: valueWords) {
                            best = max(best ?? 0, exactWeights[column])
                        }
                    }
                }
                return best.map { $0 * (1 + log10(1 + item.rank)) }
            }
            let hits = try index.search(SearchRequest(query: query, limit: 100)).hits
            let byURI = Dictionary(uniqueKeysWithValues: items.map { ($0.uri, $0) })
            let expected = hits.map { hit in byURI[hit.uri].flatMap(wholeScore) }
            // Whole-value hits form the head of the list, in non-increasing brute-force score.
            let head = expected.prefix { $0 != nil }.compactMap { $0 }
            #expect(expected.dropFirst(head.count).allSatisfy { $0 == nil }, "round \(round): \(query) → \(expected)")
            #expect(zip(head, head.dropFirst()).allSatisfy { $0 >= $1 - 1e-9 }, "round \(round): \(query) → \(head)")
            #expect(head.count == items.compactMap(wholeScore).count, "round \(round): \(query)")
        }
    }
}
