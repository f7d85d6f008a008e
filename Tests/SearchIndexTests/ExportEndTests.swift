import Foundation
import GRDB
@testable import SearchIndex
import Testing

/// An export's end: its last batch's items commit first, then what is made from every item (the typo
/// dictionary, its windows, the leader lists) commits with the end of the export, made by the writer and a
/// reader at once, row for row what the writer makes alone.
@Suite("An export's end")
struct ExportEndTests {
    /// Shallow enough that keys of a few hundred rows keep tails.
    static let shallow = TermLeaders.PlacedDepths(word: 40, prefix: 24, mostTailRows: 100_000)

    @Test("lists made beside the writer are those it makes alone, row for row, tails and phrases among them", arguments: [3, 5] as [UInt64])
    func besideEqualsAlone(seed: UInt64) throws {
        // Some longer words too, for the typo dictionary's windows (terms of six letters or more).
        let items = PlacedListTests.items(0..<3_000, seed: seed).enumerated().map { offset, item in
            var item = item
            if offset % 7 == 0 { item.text.append(["Margarita", "Valleyview", "Sanctuary"][offset % 3]) }
            return PreparedItem(item)
        }
        let alone = try PreparedItemTests.newIndex("end-alone-\(seed)"), beside = try PreparedItemTests.newIndex("end-beside-\(seed)")
        for index in [alone, beside] { try index.apply(IndexBatch(prepared: items, checkpoint: IndexFixtures.checkpoint(1))) }
        try alone.write { db in
            try TermLeaders.refresh(db, minimumDocuments: 100, registeringDocuments: 50, listingPrefixes: false, refillingDictionary: true,
                                    depths: Self.shallow)
        }
        try beside.write { db in
            try TermLeaders.refresh(db, sharingWith: beside.database, minimumDocuments: 100, registeringDocuments: 50, depths: Self.shallow)
        }
        let made = try Self.tableRows(beside)
        #expect(made == (try Self.tableRows(alone)))
        // What the comparison covers: a dictionary with windows, listed words, phrases and tails, keys registered stale.
        for table in ["item_terms", "term_windows", "term_leaders", "leader_places", "leader_place_tails"] {
            #expect(made[table]?.isEmpty == false, "\(table) is empty")
        }
        let keys = try beside.read { db in try Row.fetchAll(db, sql: "SELECT term, stale FROM leader_terms") }
        #expect(keys.contains { TermLeaders.isPhrase($0["term"]) && $0["stale"] == 0 }, "a phrase is listed")
        #expect(keys.contains { $0["stale"] == 1 }, "keys are registered stale")
        #expect(try PlacedListTests.expectSamePages(beside, "listed beside the writer") > 0)
    }

    /// Every row of the tables an export's end makes, by table, in key order (the lists' generation aside: it is random).
    static func tableRows(_ index: SearchIndex) throws -> [String: [String]] {
        let tables = [
            ("item_terms", "term"), ("term_windows", "first, length, low"), ("leader_terms", "term"), ("term_leaders", "term, id"),
            ("leader_places", "term, chunk"), ("leader_place_tails", "term"),
        ]
        return try index.read { db in
            var rows: [String: [String]] = [:]
            for (table, order) in tables {
                rows[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY \(order)").map(\.description)
            }
            return rows
        }
    }

    @Test("the batch ending an export commits its items first; a crash before the end resumes it, and it ends as it would have")
    func endsInATransactionOfItsOwn() throws {
        let items = TermLeadersTests.items(0..<3_000, seed: 71).map(PreparedItem.init)
        let first = Array(items[..<1_500]), last = Array(items[1_500...])
        var running = IndexFixtures.checkpoint(1)
        running.exportState = "page 1"
        let ended = IndexFixtures.checkpoint(1)

        let uninterrupted = try PreparedItemTests.newIndex("end-uninterrupted")
        try uninterrupted.apply(IndexBatch(prepared: first, checkpoint: running))
        try uninterrupted.apply(IndexBatch(prepared: last, checkpoint: ended))

        let crashed = try PreparedItemTests.newIndex("end-crashed")
        try crashed.apply(IndexBatch(prepared: first, checkpoint: running))
        // The last batch's own transaction, and then nothing: the process died before the end's.
        try crashed.write { db in
            var endings: [String: StoreCheckpoint] = [:]
            _ = try SearchIndex.apply(IndexBatch(prepared: last, checkpoint: ended), db: db, endings: &endings)
            #expect(endings.keys.sorted() == [ended.storeUUID] && endings[ended.storeUUID]?.exportState == nil, "the batch ends the export")
        }
        #expect(try crashed.checkpoint(storeUUID: ended.storeUUID)?.exportState == "page 1", "the index still says the export runs")
        let counts = try crashed.read { db in
            try ["items", "item_terms", "leader_terms"].map { try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)") ?? -1 }
        }
        #expect(counts == [3_000, 0, 0], "every item is in; the dictionary and the lists are not")
        // The export resumed after the crash reads its last page again, and ends.
        let resumed = try SearchIndex(path: crashed.path, mode: .readWrite(permissions: nil))
        try resumed.apply(IndexBatch(prepared: last, checkpoint: ended))
        #expect(try resumed.checkpoint(storeUUID: ended.storeUUID)?.exportState == nil)
        let made = try Self.tableRows(resumed)
        #expect(made == (try Self.tableRows(uninterrupted)))
        #expect(made["item_terms"]?.isEmpty == false && made["leader_terms"]?.isEmpty == false)
    }

    @Test("exports of two stores ending in one transaction both end; a store's batch after another's end leaves it ended")
    func severalStoresInOneTransaction() throws {
        let index = try PreparedItemTests.newIndex("end-two-stores")
        func running(_ store: String) -> StoreCheckpoint {
            var checkpoint = IndexFixtures.checkpoint(1, store: store)
            checkpoint.exportState = "page 1"
            return checkpoint
        }
        for store in ["STORE-A", "STORE-B", "STORE-C"] {
            let items = (0..<300).map { IndexFixtures.item($0, "Santa Maria \($0 % 7) Valleyview", store: store) }
            try index.apply(IndexBatch(prepared: items.map(PreparedItem.init), checkpoint: running(store)))
        }
        // A's end, then B's end, then C's page that keeps its export running: A and B end, C runs on.
        var batches = [IndexBatch(checkpoint: IndexFixtures.checkpoint(2, store: "STORE-A")),
                       IndexBatch(checkpoint: IndexFixtures.checkpoint(2, store: "STORE-B")), IndexBatch(checkpoint: running("STORE-C"))]
        try index.apply(batchesFrom: { batches.isEmpty ? nil : batches.removeFirst() })
        #expect(try index.checkpoint(storeUUID: "STORE-A")?.exportState == nil)
        #expect(try index.checkpoint(storeUUID: "STORE-B")?.exportState == nil)
        #expect(try index.checkpoint(storeUUID: "STORE-C")?.exportState == "page 1")
        #expect(try index.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM item_terms WHERE term = 'valleyview'") } == 1)
        // A store whose end is followed, in the same transaction, by a batch starting its export again runs on.
        batches = [IndexBatch(checkpoint: IndexFixtures.checkpoint(3, store: "STORE-C")), IndexBatch(checkpoint: running("STORE-C"))]
        try index.apply(batchesFrom: { batches.isEmpty ? nil : batches.removeFirst() })
        #expect(try index.checkpoint(storeUUID: "STORE-C")?.exportState == "page 1")
    }

    @Test("a reader that fails ends the writer's transaction with its error, and nothing of it is written")
    func failingReader() throws {
        let index = try PreparedItemTests.newIndex("end-failing-reader")
        try index.apply(IndexBatch(prepared: TermLeadersTests.items(0..<1_000, seed: 73).map(PreparedItem.init), checkpoint: IndexFixtures.checkpoint(1)))
        try index.write { db in try TermLeaders.refresh(db, minimumDocuments: 100, listingPrefixes: false, refillingDictionary: true) }
        let before = try Self.tableRows(index)
        // A reader of another, empty database: its pass over the vocabulary finds no table to read.
        let elsewhere = try DatabaseQueue()
        #expect(throws: SearchIndexError.self) {
            try index.write { db in try TermLeaders.refresh(db, sharingWith: elsewhere, minimumDocuments: 100) }
        }
        #expect(try Self.tableRows(index) == before)
    }
}
