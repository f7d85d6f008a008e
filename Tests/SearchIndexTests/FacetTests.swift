import Foundation
@testable import SearchIndex
import SeededRandom
import Testing

@Suite("Facets of word searches against brute force")
struct FacetTests {
    struct Entry { var uri: String; var entity: String; var words: Set<String>; var tags: [String]; var n: Double }

    @Test("an item counts once per value it holds, twice-held values too, under entity filters and attribute filters")
    func duplicatesEntitiesAndFilters() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("f.searchindex").path,
                                    mode: .readWrite(permissions: nil))
        var generator = SeededGenerator(seed: 41)
        let vocabulary = ["harbor", "lantern", "meadow", "quarry", "willow"], colors = ["red", "green", "blue", "Blue"]
        var entries: [Entry] = []
        var items: [IndexedItem] = []
        for key in 1...400 {
            let entity = Bool.random(using: &generator) ? "Place" : "Harbour"
            let words = Set((0..<Int.random(in: 1...3, using: &generator)).map { _ in vocabulary.randomElement(using: &generator) ?? "" })
            // Values repeat within an item: a to-many relationship reaching the same color twice.
            let tags = (0..<Int.random(in: 0...4, using: &generator)).map { _ in colors.randomElement(using: &generator) ?? "" }
            let n = Double(Int.random(in: 0..<10, using: &generator))
            let uri = "x-coredata://F/\(entity)/p\(key)"
            entries.append(Entry(uri: uri, entity: entity, words: words, tags: tags, n: n))
            items.append(IndexedItem(uri: uri, entity: entity, displayName: words.sorted().joined(separator: " "),
                                     attributes: ["tag": tags.map(FilterValue.string), "n": [.number(n)]]))
        }
        try index.apply(IndexBatch(upserts: items, checkpoint: IndexFixtures.checkpoint(1, store: "F")))
        for word in vocabulary {
            for entities in [[], ["Harbour"]] {
                for filter in [nil, "n > 4", "tag == 'red'"] {
                    var request = SearchRequest(query: word, limit: 3)
                    request.entities = entities
                    request.filter = filter
                    request.facets = ["tag"]
                    request.countsTotal = true
                    let matching = entries.filter { entry in
                        entry.words.contains(word) && (entities.isEmpty || entities.contains(entry.entity))
                            && (filter != "n > 4" || entry.n > 4) && (filter != "tag == 'red'" || entry.tags.contains("red"))
                    }
                    var expected: [String: Int] = [:]
                    for entry in matching { for tag in Set(entry.tags) { expected[tag, default: 0] += 1 } }
                    let results = try index.search(request)
                    let facet = try #require(results.facets.first)
                    #expect(Dictionary(uniqueKeysWithValues: facet.values.map { ($0.value, $0.count) }) == expected,
                            "\(word) \(entities) \(filter ?? "")")
                    #expect(results.total == matching.count)
                }
            }
        }
    }
}
