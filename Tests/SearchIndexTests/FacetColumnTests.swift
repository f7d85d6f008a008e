import Foundation
@testable import SearchIndex
import SeededRandom
import Testing

/// Facets counted from a connection's column of the attribute (``FacetColumn``) against brute force: the same
/// counts as looking each match up, before, during and after the switch, and never from a column of an
/// earlier snapshot.
@Suite("Facet columns against brute force")
struct FacetColumnTests {
    struct Entry {
        var words: Set<String>
        var entity: String
        var values: [String: [FilterValue]]
        var place: Coordinate?
    }

    static let vocabulary = ["harbor", "lantern", "meadow", "quarry", "willow", "cobalt"]
    static let attributes = ["tag", "n", "mixed"]

    /// A random value of each attribute: tags repeat within an item and come in two normalizations of one
    /// letter and two cases; `mixed` holds numbers, dates and texts: the number 1 and the text "1" render alike,
    /// the date 1 s after 2001 is stored as the number 1 of another kind, and -0 and 0 are one number.
    static func values(_ generator: inout SeededGenerator) -> [String: [FilterValue]] {
        let tags = ["red", "Red", "caf\u{E9}", "cafe\u{301}", "green", "blue"]
        let mixed: [FilterValue] = [.number(1), .string("1"), .date(Date(timeIntervalSinceReferenceDate: 1)), .number(-0.0), .number(0), .number(2.5),
                                    .date(Date(timeIntervalSinceReferenceDate: 86_400))]
        return [
            "tag": (0..<Int.random(in: 0...4, using: &generator)).map { _ in .string(tags.randomElement(using: &generator) ?? "") },
            "n": Bool.random(using: &generator) ? [] : [.number(Double(Int.random(in: 0..<6, using: &generator)))],
            "mixed": (0..<Int.random(in: 0...2, using: &generator)).map { _ in mixed.randomElement(using: &generator) ?? .number(0) },
        ]
    }

    static func item(_ key: Int, _ entry: Entry) -> IndexedItem {
        IndexedItem(uri: "x-coredata://FC/\(entry.entity)/p\(key)", entity: entry.entity, displayName: entry.words.sorted().joined(separator: " "),
                    latitude: entry.place?.latitude, longitude: entry.place?.longitude, attributes: entry.values)
    }

    /// What a facet shows for `entries`: each item counts once for each value it holds as stored (byte for
    /// byte, kind and number), under the value's rendering; values rendered alike add up.
    static func expected(_ attribute: String, _ entries: [Entry]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in entries {
            var seen: [(kind: Int, number: Double?, text: [UInt8]?)] = []
            for value in entry.values[attribute] ?? [] {
                let stored = (kind: value.kindCode, number: value.numberColumn, text: value.textColumn.map { Array($0.utf8) })
                guard !seen.contains(where: { $0.kind == stored.kind && $0.number == stored.number && $0.text == stored.text }) else { continue }
                seen.append(stored)
                let rendered = switch value {
                case .string(let text): text
                case .date(let date): date.formatted(Date.ISO8601FormatStyle())
                case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
                }
                counts[rendered, default: 0] += 1
            }
        }
        return counts
    }

    /// How a facet was counted.
    enum Path: Hashable {
        /// Every match looked up.
        case lookedUp
        /// Looked up until the lookups would have paid for the column, then the column read and the rest counted from it.
        case midway
        /// The column read before any lookup.
        case readFirst
        /// From the column kept by an earlier search.
        case kept
    }

    /// The total and each facet of `request` as a search counts them, on the index's own connection and its kept
    /// columns, each facet with the path it took (read from its statements).
    static func recordedFacets(_ index: SearchIndex, _ request: SearchRequest, storedReads: inout Int) throws -> (total: Int?, facets: [(Facet, Path)]) {
        let parsed = try SearchIndex.validate(request)
        return try index.read { db in
            let predicate = try SearchIndex.predicate(of: request, db: db)
            let request = try SearchIndex.withEntityKinds(request, db: db)
            // Facets count typo matches too.
            let parsed = try parsed.map { request.typoTolerance ? try Search.expanded($0, db: db) : $0 }
            var total: Int?
            var facets: [(Facet, Path)] = []
            for attribute in request.facets {
                var one = request.unpaged
                one.facets = [attribute]
                var search = Search(db: db, request: one, parsed: parsed, predicate: predicate, itemSets: index.filterItemSets, recordsStatements: true)
                let counted = try search.totalAndFacets()
                total = counted.total
                let statements = search.statements.map(\.sql)
                // (A filter probes the same index in a subquery: the lookups are the join.)
                let lookedUp = statements.contains { $0.contains("JOIN item_attributes a INDEXED BY item_attributes_by_item") || $0.contains("COUNT(DISTINCT item_id)") }
                // Read from the value indexes, or from the column the writer stored (``FacetColumn/readStored(_:maxID:db:)``).
                let stored = statements.contains { $0.contains("FROM facet_columns") }
                let read = stored || statements.contains { $0.contains("INDEXED BY item_attributes_by_number") }
                if stored { storedReads += 1 }
                let path: Path = switch (lookedUp, read) {
                case (true, false): .lookedUp
                case (true, true): .midway
                case (false, true): .readFirst
                case (false, false): .kept
                }
                facets += counted.facets.map { ($0, path) }
            }
            return (total, facets)
        }
    }

    static func recordedFacets(_ index: SearchIndex, _ request: SearchRequest) throws -> (total: Int?, facets: [(Facet, Path)]) {
        var storedReads = 0
        return try recordedFacets(index, request, storedReads: &storedReads)
    }

    @Test("words alone and places alone, lookups then a column read mid-search, kept, and read again after each write; with columns stored by the writer, read with the items changed since, or stored again",
          arguments: [false, true])
    func againstBruteForce(stored: Bool) throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("fc.searchindex").path
        let writer = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        var generator = SeededGenerator(seed: 2026)
        var entries: [Int: Entry] = [:]
        func randomEntry() throws -> Entry {
            Entry(words: Set((0..<Int.random(in: 1...3, using: &generator)).map { _ in Self.vocabulary.randomElement(using: &generator) ?? "" }),
                  entity: Bool.random(using: &generator) ? "Place" : "Harbour", values: Self.values(&generator),
                  place: Int.random(in: 0..<4, using: &generator) == 0 ? nil
                      : try Coordinate(latitude: Double.random(in: -10...10, using: &generator), longitude: Double.random(in: -10...10, using: &generator)))
        }
        for key in 1...900 { entries[key] = try randomEntry() }
        var token: Int64 = 1
        try writer.apply(IndexBatch(upserts: entries.map { Self.item($0.key, $0.value) }, checkpoint: IndexFixtures.checkpoint(token)))
        // Stored as an export's end or an idle writer stores them.
        if stored { #expect(try StoredFacetColumnTests.maintained(writer) == Self.attributes.count) }
        let reader = try SearchIndex(path: path, mode: .readOnly)
        var storedReads = 0

        var paths: [Path: Int] = [:]
        for step in 0..<90 {
            if step % 15 == 14 {
                // A write: values changed (the column of the snapshot before would count the old ones), items gone
                // (gaps in the ids) and new ones.
                var upserts: [IndexedItem] = [], deletes: [String] = []
                // Over a stored column, fewer: past an eighth of the items changed, a reader reads the value indexes instead.
                for key in entries.keys.sorted() where Int.random(in: 0..<(stored ? 40 : 6), using: &generator) == 0 {
                    entries[key]?.values = Self.values(&generator)
                    if let entry = entries[key] { upserts.append(Self.item(key, entry)) }
                }
                for key in entries.keys.sorted() where Int.random(in: 0..<(stored ? 80 : 20), using: &generator) == 0 {
                    if let entry = entries.removeValue(forKey: key) { deletes.append(Self.item(key, entry).uri) }
                }
                let next = (entries.keys.max() ?? 0) + 1
                for key in next..<(next + 40) {
                    entries[key] = try randomEntry()
                    if let entry = entries[key] { upserts.append(Self.item(key, entry)) }
                }
                token += 1
                try writer.apply(IndexBatch(upserts: upserts, deletes: deletes, checkpoint: IndexFixtures.checkpoint(token)))
                // Every other write, the columns are stored again: read whole from the value indexes, or, as an idle
                // writer does, the changes since folded into them. Between, readers read the changed items over them.
                if stored && step % 30 == 29 {
                    _ = try writer.write { db in try FacetColumn.store(step % 60 == 59 ? try FacetColumn.attributeNames(db) : nil, db: db) }
                }
            }
            // The writing index's searches run on its reader connections: a connection each, keeping its own.
            let index = step % 3 == 0 ? writer : reader
            var request = SearchRequest(limit: 5)
            request.typoTolerance = false
            let matching: [Entry]
            if step % 4 == 3 {
                // A place alone: the facets count the hits' ids.
                let (low, high) = (Double.random(in: -10...0, using: &generator), Double.random(in: 0...10, using: &generator))
                request.boundingBox = try BoundingBox(minLatitude: low, minLongitude: low, maxLatitude: high, maxLongitude: high)
                request.limit = 2_000
                matching = entries.values.filter { entry in
                    guard let place = entry.place else { return false }
                    return (low...high).contains(place.latitude) && (low...high).contains(place.longitude)
                }
            } else {
                let words = Array(Self.vocabulary.shuffled(using: &generator).prefix(Int.random(in: 1...2, using: &generator)))
                request.query = words.joined(separator: " OR ")
                // An entity or attribute filter leaves the planner's estimate an overestimate: such a facet looks
                // matches up until the column would have paid, then reads it and counts the rest from it.
                if step % 5 == 2 { request.entities = ["Harbour"] }
                if step % 5 == 4 { request.filter = "n > 2" }
                matching = entries.values.filter { entry in
                    !entry.words.isDisjoint(with: words) && (request.entities.isEmpty || entry.entity == "Harbour")
                        && (request.filter == nil || (entry.values["n"] ?? []).contains { ($0.numberColumn ?? 0) > 2 })
                }
            }
            request.facets = Self.attributes
            request.countsTotal = true
            let label = "step \(step): \(request.query ?? "a box") \(request.entities) \(request.filter ?? "")"
            // Counted with each facet's path known, then by the search itself (which may take another path).
            let recorded = try Self.recordedFacets(index, request, storedReads: &storedReads)
            #expect(recorded.total == matching.count, "\(label)")
            for (attribute, (facet, path)) in zip(Self.attributes, recorded.facets) {
                paths[path, default: 0] += 1
                #expect(facet.name == attribute)
                #expect(Dictionary(uniqueKeysWithValues: facet.values.map { ($0.value, $0.count) }) == Self.expected(attribute, matching),
                        "\(label) by \(attribute), \(path)")
            }
            let results = try index.search(request)
            #expect(results.total == matching.count, "\(label)")
            for (attribute, facet) in zip(Self.attributes, results.facets) {
                #expect(Dictionary(uniqueKeysWithValues: facet.values.map { ($0.value, $0.count) }) == Self.expected(attribute, matching),
                        "\(label) by \(attribute), searched")
            }
        }
        // Every path but the stop midway (which `stopsMidway` makes sure of) ran, several times.
        for path in [Path.lookedUp, .readFirst, .kept] { #expect(paths[path, default: 0] >= 3, "\(path): \(paths)") }
        // Stored columns were read, and only when stored.
        #expect(stored ? storedReads >= 10 : storedReads == 0, "\(storedReads) stored reads")
    }

    @Test("a filtered facet looks matches up until the column would have paid, reads it and counts the rest from it",
          arguments: [(nil, "n >= 0"), ("Harbour", nil)] as [(String?, String?)])
    func stopsMidway(entity: String?, filter: String?) throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("fm.searchindex").path,
                                    mode: .readWrite(permissions: nil))
        var generator = SeededGenerator(seed: 11)
        var entries: [Entry] = []
        for _ in 1...2_000 {
            var values = Self.values(&generator)
            values["n"] = [.number(Double(Int.random(in: 0..<6, using: &generator)))]
            entries.append(Entry(words: ["common"], entity: Bool.random(using: &generator) ? "Place" : "Harbour", values: values))
        }
        try index.apply(IndexBatch(upserts: entries.enumerated().map { Self.item($0.offset + 1, $0.element) }, checkpoint: IndexFixtures.checkpoint(1)))
        var request = SearchRequest(query: "common")
        request.typoTolerance = false
        request.entities = entity.map { [$0] } ?? []
        request.filter = filter
        request.facets = Self.attributes
        let matching = entries.filter { entity == nil || $0.entity == entity }
        // Every facet stops midway on a fresh connection (about 445 lookups pay for 2,000 ids), the next search
        // counts from the columns kept.
        for expected in [Path.midway, .kept] {
            for (attribute, (facet, path)) in zip(Self.attributes, try Self.recordedFacets(index, request).facets) {
                #expect(path == expected, "\(attribute)")
                #expect(Dictionary(uniqueKeysWithValues: facet.values.map { ($0.value, $0.count) }) == Self.expected(attribute, matching), "\(attribute), \(path)")
            }
        }
    }

    @Test("an attribute with a value per item: its column counts a few matches without an array of every value")
    func manyValues() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("fv.searchindex").path,
                                    mode: .readWrite(permissions: nil))
        // 9,000 codes, one an item; every 1,000th item also `rare`, and holds a second code that another item holds.
        let items = (1...9_000).map { (key: Int) -> IndexedItem in
            let rare = key % 1_000 == 0
            let codes: [FilterValue] = rare ? [.string("c\(key)"), .string("c\(key - 1)")] : [.string("c\(key)")]
            return IndexedItem(uri: "x-coredata://FC/Place/p\(key)", entity: "Place", displayName: rare ? "common rare" : "common", attributes: ["code": codes])
        }
        try index.apply(IndexBatch(upserts: items, checkpoint: IndexFixtures.checkpoint(1)))
        for (word, path) in [("common", Path.readFirst), ("rare", .kept), ("common", .kept)] {
            var request = SearchRequest(query: word)
            request.typoTolerance = false
            request.facets = ["code"]
            var expected: [String: Int] = [:]
            for item in items where item.displayName.split(separator: " ").contains(Substring(word)) {
                for value in item.attributes["code"] ?? [] { expected[value.textColumn ?? "", default: 0] += 1 }
            }
            let (facet, taken) = try #require(try Self.recordedFacets(index, request).facets.first)
            #expect(taken == path, "\(word)")
            #expect(Dictionary(uniqueKeysWithValues: facet.values.map { ($0.value, $0.count) }) == expected, "\(word)")
        }
    }

    @Test("a search that keeps nothing looks every match up, and gives the counts a kept column gives")
    func withoutKeeping() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("fk.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        var generator = SeededGenerator(seed: 7)
        let items = (1...600).map { key in
            Self.item(key, Entry(words: [Self.vocabulary[key % Self.vocabulary.count], "common"], entity: "Place", values: Self.values(&generator)))
        }
        try index.apply(IndexBatch(upserts: items, checkpoint: IndexFixtures.checkpoint(1)))
        var request = SearchRequest(query: "common")
        request.typoTolerance = false
        request.facets = Self.attributes
        let parsed = try SearchIndex.validate(request)
        let (lookedUp, statements) = try index.read { db in
            let results = try SearchIndex.search(request, parsed: parsed, itemSets: nil, db: db)
            let explanation = try SearchIndex.explain(request, parsed: parsed, itemSets: nil, db: db)
            return (results.facets, explanation.statements.map(\.sql))
        }
        #expect(!statements.contains { $0.contains("item_attributes_by_number WHERE name = ?") }, "no column read without a place to keep it")
        for round in 0..<3 {
            #expect(try index.search(request).facets == lookedUp, "round \(round)")
        }
        #expect(try index.explain(request).statements.contains { $0.sql.hasPrefix("SELECT items_fts.rowid ") }, "counted from the kept column")
    }
}
