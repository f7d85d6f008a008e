import CSearchTokenizer
import Foundation
import GRDB
@testable import SearchIndex

/// Fuzzes term vectors (`items.term_vector`) two ways. As FTS5's twin: a document (the input after its first
/// line: display name, title, text values and keywords, separated by U+001E, values by U+001F) is indexed
/// among fixed places, and the query of the first line searched within a circle by the term-vector plan and
/// by FTS5's must give the same hits and scores. As hostile data: the input's bytes, stored as the
/// document's vector, must be read without crashing (a clean error, or any answer), and the typo-neighbour
/// check must read them too.
enum VectorTarget {
    /// This process's folder for the index.
    static var folder: URL { FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-fuzz-vectors-\(getpid())") }

    static let index: SearchIndex = {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // libFuzzer ends a timed run with exit(): the folder goes then (every CI run left one in /tmp).
            atexit { try? FileManager.default.removeItem(at: VectorTarget.folder) }
            let index = try SearchIndex(path: folder.appendingPathComponent("fuzz.searchindex").path, mode: .readWrite(permissions: nil))
            // Places enough that counts move the IDF, with identifiers, repeated parts and scripts ICU segments.
            let names = ["Roma Nord", "Rome", "a.a.a", "Santa Roma", "New_York", "san juan", "Città", "b b", "Porto", "deviceMigration", "東京都", "river.river"]
            try index.apply(IndexBatch(upserts: (0..<60).map { key in
                IndexedItem(uri: "x-coredata://FUZZ/Place/p\(key)", entity: "Place", displayName: names[key % names.count], text: ["x\(key)", names[(key * 7) % names.count]],
                            keywords: key % 3 == 0 ? ["IT"] : [], latitude: Double(key % 7) / 10, longitude: Double(key % 5) / 10, rank: Double(key * 37 % 1000))
            }, checkpoint: StoreCheckpoint(storeUUID: "FUZZ", storePath: "/fuzz", token: 1)))
            return index
        } catch {
            fatalError("searchlight-fuzz: cannot create the vectors' index: \(error)")
        }
    }()

    static let uri = "x-coredata://FUZZ/Place/document"

    static let target = FuzzTarget(name: "vectors", prepare: { _ = index }) { data in
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let columns = (lines.count > 1 ? lines[1] : "").split(separator: "\u{1E}", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        func column(_ index: Int) -> String { index < columns.count ? columns[index] : "" }
        let document = IndexedItem(uri: uri, entity: "Place", displayName: column(0), title: column(1),
                                   text: column(2).split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init),
                                   keywords: column(3).isEmpty ? [] : [column(3)], latitude: 0.2, longitude: 0.2, rank: Double(data.count))
        let query = lines.first ?? ""
        do {
            try index.apply(IndexBatch(upserts: [document], checkpoint: StoreCheckpoint(storeUUID: "FUZZ", storePath: "/fuzz", token: 1)))
            defer {
                do {
                    try index.apply(IndexBatch(deletes: [uri], checkpoint: StoreCheckpoint(storeUUID: "FUZZ", storePath: "/fuzz", token: 1)))
                    // FTS5 against its content: a delete that left a token behind would answer the next document's searches.
                    try index.write { db in try db.execute(sql: "INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)") }
                } catch {
                    fatalError("vectors: the document's delete left the index inconsistent: \(error) (document \(lines.count > 1 ? lines[1].debugDescription : ""))")
                }
            }
            var request = SearchRequest(query: query, near: try Coordinate(latitude: 0.3, longitude: 0.2), radius: 100_000, limit: 64)
            request.typoTolerance = data.first.map { $0 % 2 == 0 } ?? false
            request.forcedPlan = .intersection
            if let fts5 = try? index.search(request) {
                request.forcedPlan = .placeThenText
                let vectors = try index.search(request)
                let expected = fts5.hits.map { "\($0.uri) \($0.score) \($0.typos)" }, found = vectors.hits.map { "\($0.uri) \($0.score) \($0.typos)" }
                guard expected == found else { fatalError("vectors: \(query.debugDescription) found \(found), FTS5 \(expected)") }
            }
            // The input as the document's vector: read as a damaged index's would be.
            try index.write { db in try db.execute(sql: "UPDATE items SET term_vector = ? WHERE uri = ?", arguments: [data, uri]) }
            _ = try? index.search(request)
            guard let words = searchlight_typo_words_create() else { return }
            defer { searchlight_typo_words_free(words) }
            for word in ["roma", "sanjuan", "a", ""] { _ = searchlight_typo_words_add(words, word, Int32(word.utf8.count), 2, word.count % 2 == 0 ? 1 : 0) }
            _ = data.withUnsafeBytes { bytes in searchlight_typo_words_near(words, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(bytes.count)) }
        } catch {
            return  // a refused query or a clean SQLite error
        }
    }
}
