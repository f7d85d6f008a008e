#if PostgreSQL
import CoreDataStore
import Foundation
import Indexer
import PostgresIndex
import SearchIndex
import Testing
import TestScratch

private let realStores = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("shared/fixtures/real-stores")
private let realStoresAvailable = FileManager.default.fileExists(atPath: realStores.appendingPathComponent("README.md").path)

/// Apple-written stores, exported with zero configuration into an SQLite index, then written item for item
/// into PostgreSQL: the two answer the words, prefixes and phrases of the stores' own display names alike
/// (the same hits in the same order, the same scores).
@Suite("Real stores on both backends", .enabled(if: realStoresAvailable, "../shared/fixtures/real-stores is absent"), .serialized, .ownThread)
struct RealStoreBackendTests {
    static let stores: [(folder: String, file: String)] = [
        ("openhouse__osxphotos__Photos-10.15.7", "Photos.sqlite"),
        ("log2timeline__plaso__macos_knowledgec-10.13", "knowledgec-10.13.db"),
        ("log2timeline__plaso__ios_RMAdminStore-Local", "RMAdminStore-Local.sqlite"),
        ("frollous__frollo-swift-sdk__FrolloSDKDataModel-1.7.2", "FrolloSDKDataModel-1.7.2.sqlite"),
        ("kodecocodes__cdt-materials__SurfJournalModel", "SurfJournalModel.sqlite"),
        ("Karim-ezzedine__CartKit__CartKitSwiftData_v1", "CartKitSwiftData_v1.sqlite"),
    ]

    @Test("every store's items, dumped alike; its own words, prefixes and phrases answered alike")
    func sameAnswers() async throws {
        guard let cluster = try WriterTests.cluster() else { return }
        defer { cluster.stop() }
        var compared = 0
        for (number, (name, file)) in Self.stores.enumerated() {
            // A database per store, as the SQLite index holds one store: the same statistics, the same scores.
            try cluster.createDatabase("store\(number)")
            let postgres = try await PostgresIndex.open(try PostgresLocation(cluster.url("store\(number)")), creating: true)
            let work = Scratch.folder.appendingPathComponent("real-backends-\(UUID().uuidString)")
            let folder = work.appendingPathComponent("store")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: realStores.appendingPathComponent(name), to: folder)
            for entry in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.appendingPathComponent(entry).path)
            }
            let store = try PersistentStore(path: folder.appendingPathComponent(file).path)
            let sqlite = try SearchIndex(path: work.appendingPathComponent("index.searchindex").path, mode: .readWrite(permissions: nil))
            let exporter = try Exporter(store: store, index: sqlite, configuration: try ResolvedConfiguration(nil, model: store.model))
            _ = try await exporter.catchUp()
            exporter.close()
            // The SQLite index's items and checkpoint, as one PostgreSQL batch per 2,000 items.
            let items = try await sqlite.dump()
            let checkpoint = try #require(try sqlite.checkpoint(storeUUID: store.metadata.storeUUID))
            let writer = try await PostgresIndexWriter.open(postgres, storeUUID: checkpoint.storeUUID)
            for start in stride(from: 0, to: max(items.count, 1), by: 2_000) {
                _ = try await writer.apply(IndexBatch(upserts: Array(items[start..<min(start + 2_000, items.count)]), checkpoint: checkpoint))
            }
            await writer.close()
            #expect(try await postgres.dump() == items, "\(name)")
            // Queries from the store itself: display-name words, their first two letters as prefixes, and
            // the first two words of names as phrases.
            var queries: [String] = []
            for item in items.prefix(400) {
                let words = SearchTokenizer.tokens(in: item.displayName).map(\.text)
                if let word = words.first { queries.append(word) }
                if let word = words.last, word.unicodeScalars.count >= 2 { queries.append(String(String.UnicodeScalarView(word.unicodeScalars.prefix(2))) + "*") }
                if words.count >= 2 { queries.append("\"\(words[0]) \(words[1])\"") }
            }
            for query in Array(Set(queries)).sorted().prefix(60) {
                var request = SearchRequest(query: query, limit: 25)
                request.typoTolerance = false
                compared += try await CrossBackendTests.compare(request, sqlite, postgres)
            }
            await postgres.close()
        }
        #expect(compared > 100)
    }
}
#endif
