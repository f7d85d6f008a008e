import Foundation
import GRDB
@testable import SearchIndex

/// Fuzzes stored facet columns (`facet_columns.body`, what a damaged or hostile index file holds). The input's
/// bytes, decoded for several sizes, must come back refused or as a column whose every ordinal names one of its
/// values, whose counting stays within them, and which stores and reads back as itself. Stored as an index's
/// column, with items changed since, a search's facets must not crash, and when the body is refused they must
/// be the counts of the value indexes.
enum FacetsTarget {
    /// This process's folder for the index.
    static var folder: URL { FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-fuzz-facets-\(getpid())") }

    /// The index, its largest item id, and each word's facet counts as the value indexes give them: counted on
    /// another index of the same items that never stored a column.
    static let fixture: (index: SearchIndex, maxID: Int64, expected: [String: [String: Int]]) = {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // libFuzzer ends a timed run with exit(): the folder goes then.
            atexit { try? FileManager.default.removeItem(at: FacetsTarget.folder) }
            let tags = ["red", "Red", "caf\u{E9}", "cafe\u{301}", "", "1"]
            let items = (0..<200).map { key in
                IndexedItem(uri: "x-coredata://FUZZ/Place/p\(key)", entity: "Place", displayName: key % 3 == 0 ? "harbor lantern" : "harbor",
                            attributes: ["tag": key % 7 == 0 ? [] : [.string(tags[key % tags.count])] + (key % 11 == 0 ? [.string("blue")] : []),
                                         "n": [.number(Double(key % 4))], "when": [.date(Date(timeIntervalSinceReferenceDate: Double(key % 2)))]])
            }
            let changes = (0..<5).map { key in
                IndexedItem(uri: "x-coredata://FUZZ/Place/p\(key)", entity: "Place", displayName: "harbor", attributes: ["tag": [.string("green")], "n": [.number(9)]])
            }
            var indexes: [SearchIndex] = []
            for name in ["fuzz", "plain"] {
                let index = try SearchIndex(path: folder.appendingPathComponent("\(name).searchindex").path, mode: .readWrite(permissions: nil))
                try index.apply(IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "FUZZ", storePath: "/fuzz", token: 1)))
                // Stored, then items changed since: a reader reads them over the stored column.
                if name == "fuzz" { while try index.maintain(budget: 10) {} }
                try index.apply(IndexBatch(upserts: changes, checkpoint: StoreCheckpoint(storeUUID: "FUZZ", storePath: "/fuzz", token: 2)))
                indexes.append(index)
            }
            var expected: [String: [String: Int]] = [:]
            for word in words { expected[word] = try counts(indexes[1], word) }
            let maxID = try indexes[0].read { db in try Int64.fetchOne(db, sql: "SELECT max(id) FROM items") ?? 0 }
            return (indexes[0], maxID, expected)
        } catch {
            fatalError("searchlight-fuzz: cannot create the facets' indexes: \(error)")
        }
    }()

    static let words = ["harbor", "lantern"]
    static let attributes = ["tag", "n", "when"]

    /// Each attribute's facet of a word, by rendering, counted as a search of a connection keeping columns counts it:
    /// with a set of kept columns of its own, so that nothing is kept from one input to the next (nor left for
    /// LeakSanitizer, which does not see a column kept in an enum's payload).
    static func counts(_ index: SearchIndex, _ word: String) throws -> [String: Int] {
        var request = SearchRequest(query: word, limit: 3)
        request.facets = attributes
        request.typoTolerance = false
        let parsed = try SearchIndex.validate(request)
        let facets = try index.read { db in
            var search = Search(db: db, request: request.unpaged, parsed: parsed, itemSets: FilterItemSets())
            return try search.totalAndFacets().facets
        }
        var counts: [String: Int] = [:]
        for facet in facets { for value in facet.values { counts["\(facet.name)=\(value.value)", default: 0] += value.count } }
        return counts
    }

    static let target = FuzzTarget(name: "facets", prepare: { _ = fixture }) { data in
        let bytes = [UInt8](data)
        for size in [0, 17, 200, 4_096] {
            guard let column = bytes.withUnsafeBytes({ FacetColumn.decode($0, count: size) }) else { continue }
            let last = UInt32(column.values.count)
            guard column.ordinals.count == size, column.ordinals.allSatisfy({ $0 <= last || $0 == FacetColumn.several }),
                  column.more.allSatisfy({ $0.key >= 0 && $0.key < size && $0.value.allSatisfy { $0 >= 1 && $0 <= last } }) else {
                fatalError("facets: a decoded column names a value it does not hold (size \(size))")
            }
            var counts = column.emptyCounts()
            for id in -1...Int64(size) { column.count(id, into: &counts) }
            _ = column.groups(counts)
            // What was read stores and reads back as itself.
            guard let again = column.body.withUnsafeBytes({ FacetColumn.decode($0, count: size) }),
                  again.ordinals == column.ordinals, again.more == column.more, again.values.count == column.values.count,
                  // Bit for bit: a damaged body's number may be a NaN, which equals nothing.
                  zip(again.values, column.values).allSatisfy({ $0.kind == $1.kind && $0.number?.bitPattern == $1.number?.bitPattern
                      && $0.text.map { Array($0.utf8) } == $1.text.map { Array($0.utf8) } }) else {
                fatalError("facets: a decoded column did not read back as itself (size \(size))")
            }
        }
        // The input as every stored column of the index, read by a search with the changes since.
        let (index, maxID, expected) = fixture
        do {
            let refused = bytes.withUnsafeBytes { FacetColumn.decode($0, count: Int(maxID) + 1) } == nil
            try index.write { db in try db.execute(sql: "UPDATE facet_columns SET body = ?", arguments: [data]) }
            for word in words {
                let found = try counts(index, word)
                if refused && found != expected[word] {
                    fatalError("facets: a refused body gave \(word) \(found), the value indexes \(expected[word] ?? [:])")
                }
            }
        } catch {
            fatalError("facets: a stored body failed a search: \(error)")
        }
    }
}
