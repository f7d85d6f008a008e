import CoreDataStore
import Foundation
import GRDB
@testable import Indexer
@testable import SearchIndex
import Testing
import TestScratch

private let realStoresFolder = ExporterTests.shared.deletingLastPathComponent().appendingPathComponent("real-stores")
private let realStoresAvailable = FileManager.default.fileExists(atPath: realStoresFolder.appendingPathComponent("README.md").path)

/// Every real Apple-written store indexes with zero configuration: one item per object of every
/// concrete entity, nothing written beside the store, and a second catch-up finds nothing to do.
@Suite("Zero-configuration export of real stores", .enabled(if: realStoresAvailable, "../shared/fixtures/real-stores is absent"))
struct RealStoreExportTests {
    static let realStores = realStoresFolder
    static let stores: [(folder: String, file: String)] = [
        ("openhouse__osxphotos__Photos-10.15.7", "Photos.sqlite"),
        ("log2timeline__plaso__macos_knowledgec-10.13", "knowledgec-10.13.db"),
        ("log2timeline__plaso__ios_RMAdminStore-Local", "RMAdminStore-Local.sqlite"),
        ("wibosco__CoreDataMigration-Example__Example_WAL", "CoreDataMigration_Example_WAL.sqlite"),
        ("frollous__frollo-swift-sdk__FrolloSDKDataModel-1.7.2", "FrolloSDKDataModel-1.7.2.sqlite"),
        ("billtkh__KeasyBoard__Simplex", "Simplex.sqlite"),
        ("kodecocodes__cdt-materials__SurfJournalModel", "SurfJournalModel.sqlite"),
        ("Karim-ezzedine__CartKit__CartKitSwiftData_v1", "CartKitSwiftData_v1.sqlite"),
    ]

    @Test("one item per object, the store untouched, nothing left to do afterwards", arguments: stores.map(\.folder))
    func export(folder name: String) async throws {
        let file = try #require(Self.stores.first { $0.folder == name }?.file)
        let work = Scratch.folder.appendingPathComponent("real-export-\(UUID().uuidString)")
        let folder = work.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.realStores.appendingPathComponent(name), to: folder)
        for entry in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.appendingPathComponent(entry).path)
        }
        let before = try Self.files(folder)
        let path = folder.appendingPathComponent(file).path

        let store = try PersistentStore(path: path)
        let index = try SearchIndex(path: work.appendingPathComponent("index.searchindex").path, mode: .readWrite(permissions: nil))
        let configuration = try ResolvedConfiguration(nil, model: store.model)
        let exporter = try Exporter(store: store, index: index, configuration: configuration)
        let summary = try await exporter.catchUp()
        #expect(summary.updated == 0 && summary.deleted == 0)
        if !store.hasHistory {
            // Never followed, so its export did the index's upkeep: no answer list is left to build.
            #expect(try index.maintain(budget: 1) == false)
        }

        // The objects every plan's entity holds, counted by the reader entity by entity.
        var expected: Set<String> = []
        try store.read { snapshot throws in
            for entity in configuration.plans.keys {
                var after: Int64 = 0
                while case let page = try snapshot.objects(ofEntity: entity, afterPrimaryKey: after, limit: 2_000, relationships: .toOneOnly),
                      let last = page.last {
                    for object in page where object.entityName == entity { expected.insert(object.objectID.uriRepresentation) }
                    after = last.objectID.primaryKey
                }
            }
        }
        let items = try await index.dump()
        #expect(Set(items.map(\.uri)) == expected)
        #expect(items.count == expected.count && summary.inserted == expected.count)
        #expect(!items.isEmpty)

        let again = try await exporter.catchUp()
        if store.hasHistory {
            #expect(again.inserted == 0 && again.updated == 0 && again.deleted == 0)
            #expect(again.token == (try store.historyBounds()).newest)
        } else {
            // Without history every run exports the store again, over the items it already has: nothing changes.
            #expect(again.inserted == 0 && again.updated == 0 && again.deleted == 0)
            #expect(Set(try await index.dump().map(\.uri)) == expected)
        }
        #expect(try Self.files(folder) == before)
    }

    @Test("replaying a real store's whole history over its index (dependents, digests, pages) changes no item",
          arguments: stores.map(\.folder))
    func replayHistory(folder name: String) async throws {
        let file = try #require(Self.stores.first { $0.folder == name }?.file)
        let work = Scratch.folder.appendingPathComponent("real-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let folder = work.appendingPathComponent("store")
        try FileManager.default.copyItem(at: Self.realStores.appendingPathComponent(name), to: folder)
        for entry in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.appendingPathComponent(entry).path)
        }
        let store = try PersistentStore(path: folder.appendingPathComponent(file).path)
        guard store.hasHistory, let oldest = try store.historyBounds().oldest else { return }
        let index = try SearchIndex(path: work.appendingPathComponent("index.searchindex").path, mode: .readWrite(permissions: nil))
        // Small pages, so that expansions span several of them; never a rebuild instead of the replay.
        let exporter = try Exporter(store: store, index: index, configuration: try ResolvedConfiguration(nil, model: store.model), batchSize: 50)
        exporter.rebuildPolicy.minimumChanges = .max
        _ = try await exporter.catchUp()
        let exported = Set(try await index.dump())
        // The index taken back to before the store's oldest transaction: every change is replayed, each
        // object re-read as it is now, so the items must come out as they are.
        var behind = try #require(try index.checkpoint(storeUUID: store.metadata.storeUUID))
        behind.token = oldest - 1
        behind.tokenTimestamp = nil
        try index.apply(IndexBatch(checkpoint: behind))
        let summary = try await exporter.catchUp()
        #expect(summary.rebuildReason == nil && summary.inserted == 0 && summary.updated == 0 && summary.deleted == 0, "\(summary)")
        #expect(summary.token == (try store.historyBounds()).newest)
        #expect(Set(try await index.dump()) == exported)
    }

    /// Parts of identifiers, split independently of the tokenizer: at anything but letters and digits, at
    /// lower→upper humps, and before the last capital of an acronym that starts a word (`HTTPServer`).
    static func identifierParts(_ text: String) -> [String] {
        let characters = Array(text)
        var parts: [String] = [], current = ""
        for (position, character) in characters.enumerated() {
            guard character.isLetter || character.isNumber else {
                if !current.isEmpty { parts.append(current) }
                current = ""
                continue
            }
            if let previous = current.last {
                let next = position + 1 < characters.count ? characters[position + 1] : nil
                let hump = previous.isLowercase && character.isUppercase
                let acronymEnd = previous.isUppercase && character.isUppercase && next?.isLowercase == true
                if hump || acronymEnd { parts.append(current); current = "" }
            }
            current.append(character)
        }
        if !current.isEmpty { parts.append(current) }
        return parts
    }

    /// A copy of the real store in `name`, exported with the zero configuration into a fresh index in a folder
    /// named `label`.
    static func exported(_ name: String, into label: String) async throws -> SearchIndex {
        let file = try #require(stores.first { $0.folder == name }?.file)
        let work = try TestFolder.make(label)
        try FileManager.default.copyItem(at: realStores.appendingPathComponent(name), to: work.appendingPathComponent("store"))
        let store = try PersistentStore(path: work.appendingPathComponent("store").appendingPathComponent(file).path)
        let index = try SearchIndex(path: work.appendingPathComponent("index.searchindex").path, mode: .readWrite(permissions: nil))
        _ = try await Exporter(store: store, index: index, configuration: try ResolvedConfiguration(nil, model: store.model)).catchUp()
        return index
    }

    /// Places every item where two SQL expressions of its row say, in its row and in the R-tree.
    static func place(_ db: Database, latitude: String, longitude: String) throws {
        try db.execute(sql: "UPDATE items SET latitude = \(latitude), longitude = \(longitude)")
        try db.execute(sql: "INSERT OR REPLACE INTO items_geo (id, min_lat, max_lat, min_lon, max_lon) SELECT id, latitude, latitude, longitude, longitude FROM items")
    }

    @Test("on real data the term-vector plan answers as FTS5: words, identifier parts, prefixes and phrases of the items",
          arguments: stores.map(\.folder))
    func termVectorsAnswerAsFTS5(folder name: String) async throws {
        let index = try await Self.exported(name, into: "real-vectors")
        // Every item placed at one point, so that both plans see every item in the region.
        try index.write { db in try Self.place(db, latitude: "0", longitude: "0") }
        let items = try await index.dump()
        var queries: Set<String> = []
        for item in items.prefix(400) {
            let tokens = SearchTokenizer.tokens(in: ([item.displayName] + item.text).joined(separator: " "), withParts: true).map(\.text)
            guard let first = tokens.first else { continue }
            queries.insert("\"\(first)\"")
            if let last = tokens.last, last.count >= 3 { queries.insert("\"\(last.prefix(3))\"*") }
            if tokens.count > 1 { queries.insert("\"\(tokens[0]) \(tokens[1])\"") }
        }
        var compared = 0
        for query in queries.sorted().prefix(150) {
            var request = SearchRequest(query: query, near: try Coordinate(latitude: 0, longitude: 0), radius: 10_000, limit: 50)
            request.typoTolerance = false
            request.forcedPlan = .intersection
            let fts5 = try await index.search(request).hits
            request.forcedPlan = .placeThenText
            let vectors = try await index.search(request).hits
            #expect(vectors.map(\.uri) == fts5.map(\.uri), "\(name): \(query)")
            #expect(vectors.map(\.score) == fts5.map(\.score), "\(name): \(query)")
            compared += vectors.count
        }
        if !items.isEmpty { #expect(compared > 0, "\(name): nothing compared") }
    }

    @Test("on real data placed lists answer wide regions (and a point alone) as full scoring: words, prefixes and phrases of the items, ties and all",
          arguments: stores.map(\.folder))
    func placedListsAnswerAsFullScoring(folder name: String) async throws {
        let index = try await Self.exported(name, into: "real-placed")
        // Items spread over the globe by id, then listed (most have no rank: whole-value matches tie).
        try index.write { db in
            try Self.place(db, latitude: "(id * 37 % 170) - 85", longitude: "(id * 101 % 360) - 180")
            try TermLeaders.refresh(db, minimumDocuments: 20, listingPrefixes: true)
        }
        let keys = try await index.read { db in try String.fetchAll(db, sql: "SELECT term FROM leader_terms WHERE stale = 0 ORDER BY documents DESC LIMIT 40") }
        var answered = 0
        for key in keys {
            let (token, isPrefix) = TermLeaders.token(ofKey: key)
            let query = "\"\(token)\"" + (isPrefix ? "*" : "")
            for (near, radius) in [((0.0, 0.0), 20_000_000.0), ((30, 60), 3_000_000), ((-40, -100), 5_000_000), ((50, 10), nil)] as [((Double, Double), Double?)] {
                for (limit, offset) in [(20, 0), (10, 15)] {
                    var request = SearchRequest(query: query, near: try Coordinate(latitude: near.0, longitude: near.1), radius: radius, limit: limit, offset: offset)
                    request.typoTolerance = false
                    let listed = try await index.search(request)
                    request.usesTermLeaders = false
                    let full = try await index.search(request)
                    #expect(listed.hits.map { "\($0.uri) \($0.score) \($0.distance ?? -1)" } == full.hits.map { "\($0.uri) \($0.score) \($0.distance ?? -1)" },
                            "\(name): \(query) within \(radius.map { "\($0 / 1000) km" } ?? "any distance") of \(near) limit \(limit) offset \(offset)")
                    if listed.plan == .placedList { answered += 1 }
                }
            }
        }
        if !keys.isEmpty { #expect(answered > 0, "\(name): no page answered by a placed list") }
    }

    @Test("identifier parts in real data (bundle IDs, camelCase names) find their items, and only items holding them",
          arguments: stores.map(\.folder))
    func identifierParts(folder name: String) async throws {
        let index = try await Self.exported(name, into: "real-parts")
        let items = try await index.dump()
        func fold(_ text: String) -> String { text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil) }
        // Identifiers only: words the tokenizer would keep whole that hold a separator or a hump.
        var candidates: [(part: String, uri: String)] = []
        for item in items {
            for word in ([item.displayName] + item.text).flatMap({ $0.split(whereSeparator: { $0.isWhitespace || $0 == "," }) }) {
                let parts = Self.identifierParts(String(word))
                guard parts.count > 1, word.allSatisfy({ $0.isASCII }) else { continue }
                for part in parts where part.count >= 3 && part.allSatisfy({ $0.isLetter }) { candidates.append((part, item.uri)) }
            }
        }
        var seen: Set<String> = []
        let sample = candidates.filter { seen.insert($0.part.lowercased()).inserted }.prefix(40)
        for (part, uri) in sample {
            var request = SearchRequest(query: part, limit: 10_000)
            request.typoTolerance = false  // "holds the part" is checked as typed
            let found = try await index.search(request).hits.map(\.uri)
            #expect(found.contains(uri), "\(name): '\(part)' does not find \(uri)")
            // Every hit holds the part somewhere in its text.
            let byURI = Dictionary(items.map { ($0.uri, $0) }, uniquingKeysWith: { first, _ in first })
            for hit in found {
                let item = try #require(byURI[hit])
                let text = fold(([item.displayName, item.title] + item.text + item.keywords).joined(separator: " "))
                #expect(text.contains(fold(part)), "\(name): '\(part)' found \(hit), which does not hold it")
            }
        }
        if name.contains("RMAdminStore") { #expect(sample.count >= 10, "\(sample.count) identifier parts") }
    }

    static func files(_ folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            var isDirectory: ObjCBool = false
            let path = folder.appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result[name] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return result
    }
}

/// The first history layout (macOS 10.13: no `ATRANSACTIONSTRING`, strings inline) is followed like the
/// current one: saves written the way Core Data 851 wrote them reach the index through history.
@Suite("Following the first history layout", .enabled(if: realStoresAvailable, "../shared/fixtures/real-stores is absent"), .ownThread)
struct FirstHistoryLayoutFollowTests {
    @Test("an insert and a delete saved by a 10.13-era app are indexed from history, while following")
    func followsFirstLayout() async throws {
        let work = try TestFolder.make("first-layout")
        let path = work.appendingPathComponent("knowledgeC.db").path
        try FileManager.default.copyItem(
            atPath: realStoresFolder.appendingPathComponent("log2timeline__plaso__macos_knowledgec-10.13/knowledgec-10.13.db").path, toPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)

        let indexPath = work.appendingPathComponent("k.searchindex").path
        let recorder = ServiceRecorder(indexPath: indexPath, stores: [path])
        try recorder.service.start()
        #expect(await recorder.waitUntilCaughtUp())
        let first = try #require(recorder.updates.first)
        #expect(first.token == 536)
        let uuid = first.store.uuid
        let index = try SearchIndex(path: indexPath, mode: .readOnly)
        #expect(try await index.dump().contains { $0.uri == "x-coredata://\(uuid)/Event/p508" })

        // One save as Core Data 851 writes it: the row, a transaction with its strings inline, a change.
        let app = try DatabaseQueue(path: path)
        try await app.write { db in
            try db.execute(sql: "CREATE TEMP TABLE copy AS SELECT * FROM ZOBJECT WHERE Z_PK = 508")
            try db.execute(sql: "UPDATE copy SET Z_PK = 10000")
            try db.execute(sql: "INSERT INTO ZOBJECT SELECT * FROM copy")
            try db.execute(sql: "DELETE FROM ZOBJECT WHERE Z_PK = 509")
            try db.execute(sql: """
                INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZTIMESTAMP, ZAUTHOR, ZBUNDLEID, ZCONTEXTNAME, ZPROCESSID)
                VALUES (537, 16002, NULL, 600000000, NULL, 'org.searchlight.tests', NULL, 'swift-test')
                """)
            try db.execute(sql: """
                INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS)
                VALUES (1116, 16001, NULL, 0, 10, 10000, 537, NULL), (1117, 16001, NULL, 2, 10, 509, 537, NULL)
                """)
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 537 WHERE Z_ENT = 16002")
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 1117 WHERE Z_ENT = 16001")
        }
        try app.close()
        #expect(await recorder.wait { _ in recorder.updates.contains { $0.token == 537 } })
        await recorder.stop()
        #expect(recorder.stops.count == 1 && recorder.stops.first! == nil)
        let caughtUp = try #require(recorder.updates.first { $0.token == 537 })
        #expect(caughtUp.inserted == 1 && caughtUp.deleted == 1)
        let uris = Set(try await index.dump().map(\.uri))
        #expect(uris.contains("x-coredata://\(uuid)/Event/p10000"))
        #expect(!uris.contains("x-coredata://\(uuid)/Event/p509"))
    }
}
