import Foundation
import GRDB
@testable import SearchIndex
import SeededRandom
import Testing

/// Facet columns the writer stores in the file (``FacetColumn``'s `facet_columns`): when they are stored and
/// dropped, what a reader makes of the items changed since, and bodies that are not what the writer wrote.
@Suite("Stored facet columns")
struct StoredFacetColumnTests {
    static func item(_ key: Int, _ name: String, tag: String?) -> IndexedItem {
        IndexedItem(uri: "x-coredata://STORE-A/Place/p\(key)", entity: "Place", displayName: name,
                    attributes: tag.map { ["tag": [.string($0)], "n": [.number(Double(key % 3))]] } ?? [:])
    }

    /// Runs the writer's idle upkeep until it has nothing left to do; returns the turns that did something.
    static func maintained(_ index: SearchIndex) throws -> Int {
        var turns = 0
        while try index.maintain(budget: 10) { turns += 1 }
        return turns
    }

    static func rows(_ index: SearchIndex, _ sql: String) throws -> Int {
        try index.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    static func counts(_ index: SearchIndex, _ query: String, _ attribute: String = "tag") throws -> [String: Int] {
        var request = SearchRequest(query: query, limit: 5)
        request.facets = [attribute]
        request.typoTolerance = false
        let facet = try index.search(request).facets.first
        return Dictionary(uniqueKeysWithValues: (facet?.values ?? []).map { ($0.value, $0.count) })
    }

    @Test("stored when idle and when an export ends, dropped by an export's pages and by clearing the only store; stored again past the threshold")
    func lifecycle() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("stored.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: (1...50).map { Self.item($0, "harbor", tag: $0 % 2 == 0 ? "even" : "odd") }, checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_columns") == 0)
        // An idle writer stores a column per attribute, one a turn, then has nothing more to do.
        #expect(try Self.maintained(index) == 2)
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_columns WHERE body IS NOT NULL") == 2)
        #expect(try !index.maintain(budget: 10))
        #expect(try Self.counts(index, "harbor") == ["even": 25, "odd": 25])

        // Changes are noted, read over the column, and folded in once past the threshold.
        try index.apply(IndexBatch(upserts: [Self.item(1, "harbor", tag: "even")], checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_column_changes") == 1)
        #expect(try Self.counts(index, "harbor") == ["even": 26, "odd": 24])
        #expect(try !index.maintain(budget: 10))
        try index.apply(IndexBatch(upserts: (1...1_100).map { Self.item($0, "harbor", tag: "t\($0 % 4)") }, checkpoint: IndexFixtures.checkpoint(3)))
        #expect(try Self.maintained(index) > 0)
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_column_changes") == 0)
        #expect(try Self.counts(index, "harbor") == ["t0": 275, "t1": 275, "t2": 275, "t3": 275])

        // An export's page drops the columns; the batch ending it stores them again.
        var page = IndexFixtures.checkpoint(4)
        page.exportState = "page 1"
        try index.apply(IndexBatch(upserts: [Self.item(2_000, "harbor", tag: "new")], checkpoint: page))
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_columns") == 0)
        #expect(try Self.counts(index, "harbor")["new"] == 1)
        try index.apply(IndexBatch(upserts: [Self.item(2_001, "harbor", tag: "new")], checkpoint: IndexFixtures.checkpoint(5)))
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_columns WHERE body IS NOT NULL") == 2)
        #expect(try Self.counts(index, "harbor")["new"] == 2)

        // Clearing the only store clears them.
        try index.removeStore(uuid: "STORE-A")
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_columns") + Self.rows(index, "SELECT count(*) FROM facet_column_changes") == 0)
        #expect(try !index.maintain(budget: 10))
    }

    @Test("folded again and again while dates change at every save: the counts stay those of the items, the values those held")
    func folding() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("folding.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        func item(_ key: Int, _ day: Int) -> IndexedItem {
            IndexedItem(uri: "x-coredata://STORE-A/Place/p\(key)", entity: "Place", displayName: "harbor",
                        attributes: ["day": [.number(Double(day))], "tag": [.string(key % 2 == 0 ? "even" : "odd")]])
        }
        var days = Dictionary(uniqueKeysWithValues: (1...300).map { ($0, $0) })
        try index.apply(IndexBatch(upserts: days.map { item($0.key, $0.value) }, checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try Self.maintained(index) > 0)
        var generator = SeededGenerator(seed: 7)
        for round in 0..<40 {
            var upserts: [IndexedItem] = []
            for _ in 0..<30 {
                let key = Int.random(in: 1...300, using: &generator)
                days[key] = 1_000 + 100 * round + upserts.count
                upserts.append(item(key, days[key] ?? 0))
            }
            try index.apply(IndexBatch(upserts: upserts, checkpoint: IndexFixtures.checkpoint(Int64(round + 2))))
            // Folded as an idle writer folds them (the threshold aside).
            _ = try index.write { db in try FacetColumn.store(["day", "tag"], db: db) }
            #expect(try Self.rows(index, "SELECT count(*) FROM facet_column_changes") == 0)
            var expected: [String: Int] = [:]
            for day in days.values { expected[String(day), default: 0] += 1 }
            #expect(try Self.counts(index, "harbor", "day") == expected, "round \(round)")
            #expect(try Self.counts(index, "harbor") == ["even": 150, "odd": 150])
        }
        // The values no item holds went once they were half of them.
        let values = try index.read { db in try FacetColumn.readStored("day", maxID: 300, db: db)?.values.count }
        #expect(values.map { $0 <= 2 * Set(days.values).count + 64 } == true, "\(values ?? -1) values")
    }

    @Test("an attribute no item holds any longer: its column goes when the writer is next idle, and the changes with it")
    func attributeGone() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("gone.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: (1...40).map { Self.item($0, "harbor", tag: "t\($0 % 2)") }, checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try Self.maintained(index) > 0)
        // Every item keeps its tag and loses `n`.
        try index.apply(IndexBatch(upserts: (1...40).map {
            IndexedItem(uri: Self.item($0, "", tag: nil).uri, entity: "Place", displayName: "harbor", attributes: ["tag": [.string("t\($0 % 2)")]])
        }, checkpoint: IndexFixtures.checkpoint(2)))
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_column_changes") == 40)
        #expect(try Self.maintained(index) > 0)
        #expect(try index.read { db in try String.fetchAll(db, sql: "SELECT name FROM facet_columns ORDER BY name") } == ["tag"])
        // Below the threshold, `tag`'s changes stay; once folded, none is left behind the gone column.
        _ = try index.write { db in try FacetColumn.store(["tag"], db: db) }
        #expect(try Self.rows(index, "SELECT count(*) FROM facet_column_changes") == 0)
        #expect(try Self.counts(index, "harbor") == ["t0": 20, "t1": 20])
        #expect(try !index.maintain(budget: 10))
    }

    @Test("an item id used again by an item without attributes does not count the gone item's value")
    func reusedID() throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("reused.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: (1...10).map { Self.item($0, "harbor", tag: "old") }, checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try Self.maintained(index) > 0)
        let last = try Self.rows(index, "SELECT max(id) FROM items")
        // The item of the largest id goes; SQLite gives its id to the next item, which holds no attribute.
        try index.apply(IndexBatch(deletes: [Self.item(10, "", tag: nil).uri], checkpoint: IndexFixtures.checkpoint(2)))
        try index.apply(IndexBatch(upserts: [Self.item(11, "harbor", tag: nil)], checkpoint: IndexFixtures.checkpoint(3)))
        #expect(try Self.rows(index, "SELECT id FROM items WHERE uri = '\(Self.item(11, "", tag: nil).uri)'") == last)
        #expect(try Self.counts(index, "harbor") == ["old": 9])
    }

    @Test("a damaged body, a damaged change or a body of another version: facets count what the value indexes hold",
          arguments: ["UPDATE facet_columns SET body = x'01ffffffff0f'", "UPDATE facet_columns SET body = x'02'",
                      "UPDATE facet_columns SET body = substr(body, 1, length(body) - 3)", "UPDATE facet_columns SET body = 'text'",
                      "UPDATE facet_columns SET covers = -1, folds = 99", "INSERT INTO facet_column_changes (item_id) VALUES (-3), (99999999)"])
    func damaged(sql: String) throws {
        let path = IndexFixtures.temporaryDirectory().appendingPathComponent("damaged.searchindex").path
        let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: (1...300).map { Self.item($0, $0 % 3 == 0 ? "harbor lantern" : "harbor", tag: "t\($0 % 5)") },
                                   checkpoint: IndexFixtures.checkpoint(1)))
        #expect(try Self.maintained(index) > 0)
        let expected = try Self.counts(index, "harbor")
        #expect(expected == ["t0": 60, "t1": 60, "t2": 60, "t3": 60, "t4": 60])
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: sql) }
        try queue.close()
        // A reader in another process, where nothing is kept yet.
        let reader = try SearchIndex(path: path, mode: .readOnly)
        #expect(try Self.counts(reader, "harbor") == expected)
        #expect(try Self.counts(reader, "lantern") == ["t0": 20, "t1": 20, "t2": 20, "t3": 20, "t4": 20])
        #expect(try Self.counts(reader, "harbor", "n") == ["0": 100, "1": 100, "2": 100])
    }

    @Test("bodies: 2,000 random columns come back as stored; every truncation and 20,000 byte flips are refused or read within bounds")
    func bodies() throws {
        var generator = SeededGenerator(seed: 21)
        let texts = ["", "a", "caf\u{E9}", "cafe\u{301}", "\u{0}nul", "東京", String(repeating: "x", count: 300)]
        var flipped = 0
        for round in 0..<2_000 {
            let values: [FacetColumn.Value] = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: FacetColumn.Value(kind: 0, number: nil, text: texts.randomElement(using: &generator))
                case 1: FacetColumn.Value(kind: Int64.random(in: -3...3, using: &generator), number: Double.random(in: -1e300...1e300, using: &generator), text: nil)
                default: FacetColumn.Value(kind: Int64.random(in: Int64.min...Int64.max, using: &generator), number: nil, text: nil)
                }
            }
            let count = Int.random(in: 0...300, using: &generator)
            var ordinals = (0..<count).map { _ in UInt32.random(in: 0...UInt32(values.count), using: &generator) }
            var more: [Int64: [UInt32]] = [:]
            if values.count >= 2 {
                for _ in 0..<Int.random(in: 0...5, using: &generator) where count > 0 {
                    let item = Int.random(in: 0..<count, using: &generator)
                    ordinals[item] = FacetColumn.several
                    more[Int64(item)] = [1, UInt32(values.count)]
                }
            }
            let column = FacetColumn(values: values, ordinals: ordinals, more: more)
            let body = column.body
            // Read back at its own size, and at a smaller and a larger one.
            for size in [count, count / 2, count + 7] {
                let read = body.withUnsafeBytes { FacetColumn.decode($0, count: size) }
                #expect(read != nil, "round \(round)")
                guard let read else { continue }
                #expect(read.values.count == values.count && zip(read.values, values).allSatisfy { $0.isStored(as: $1) && $0.number?.bitPattern == $1.number?.bitPattern })
                #expect(read.ordinals == Array((ordinals + [UInt32](repeating: 0, count: 7)).prefix(size)))
                #expect(read.more == more.filter { $0.key < size })
            }
            if round < 100 {
                for end in 0..<body.count { #expect(Array(body.prefix(end)).withUnsafeBytes { FacetColumn.decode($0, count: count) } == nil) }
            }
            for _ in 0..<10 where !body.isEmpty {
                var damaged = body
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                guard let read = damaged.withUnsafeBytes({ FacetColumn.decode($0, count: count) }) else { continue }
                flipped += 1
                // Read: every ordinal within the values, so counting never reaches past them.
                var counts = read.emptyCounts()
                for id in 0..<Int64(count) { read.count(id, into: &counts) }
                _ = read.groups(counts)
            }
        }
        #expect(flipped > 100, "\(flipped) damaged bodies read")
    }
}
