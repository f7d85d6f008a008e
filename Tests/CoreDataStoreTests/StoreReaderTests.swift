@testable import CoreDataStore
import Foundation
import GRDB
import Testing

@Suite("Reading Apple-written stores", .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
struct StoreReaderTests {
    let directory = Fixtures.temporaryDirectory()

    func open(_ name: String, model: String? = nil) throws -> PersistentStore {
        try PersistentStore(path: Fixtures.copyStore(name, to: directory), modelPath: model)
    }

    @Test("every fixture opens with its Z_MODELCACHE model, UUID and metadata digests Apple wrote", arguments: Fixtures.storeNames)
    func opens(name: String) throws {
        let store = try open(name)
        #expect(store.model.source == .modelCache)
        #expect(store.metadata.storeUUID.count == 36)
        #expect(store.metadata.storeType == "SQLite")
        // Our SHA-512/SHA-256 over Apple's hashes reproduce the digests Apple stored.
        #expect(StoreMetadata.digest(of: store.metadata.versionHashes) == store.metadata.versionHashesDigest)
        if let checksum = store.metadata.versionChecksum {
            #expect(StoreMetadata.checksum(of: store.metadata.versionHashes) == checksum)
        }
        #expect(Set(store.model.entities.map(\.name)) == Set(store.metadata.versionHashes.keys))
    }

    @Test("SampleModel2: entities, numbers, hierarchy and columns")
    func sampleModel2() throws {
        let store = try open("SampleModel2_V1")
        #expect(store.metadata.storeUUID == "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A")
        #expect(store.metadata.frameworkVersion == 1344)
        #expect(store.layout.entityNumbers == ["Book": 1, "GraphicNovel": 2, "Feedback": 3, "Page": 4, "Writer": 5, "Author": 6])
        #expect(store.model.entity(named: "Writer")?.isAbstract == true)
        #expect(store.model.entity(named: "GraphicNovel")?.attributes.map(\.name) == ["isBlackAndWhite"])
        #expect(store.model.allAttributes(of: "Author").map(\.name) == ["age", "alias", "siteURL"])
        #expect(store.model.entity(named: "Author")?.fetchedPropertyNames == ["favFeedbacks", "feedbacks"])
        #expect(store.model.attribute("pagesCount", of: "Book")?.isDerived == true)
        #expect(store.layout.storage(of: "book", entity: "Page", model: store.model) == .toOne(column: "ZBOOK", entityColumn: "Z1_BOOK"))
        #expect(store.layout.storage(of: "pages", entity: "GraphicNovel", model: store.model) == .toManyViaInverse(table: "ZPAGE", column: "ZBOOK", orderColumn: nil))
        try store.read { snapshot throws in
            #expect(try snapshot.count(ofEntity: "Book") == 52)
            #expect(try snapshot.count(ofEntity: "GraphicNovel") == 1)
            #expect(try snapshot.count(ofEntity: "Page") == 4970)
            #expect(try snapshot.count(ofEntity: "Feedback") == 444)
            #expect(try snapshot.count(ofEntity: "Writer") == 2)
        }
    }

    @Test("objects read by URI: attributes typed, relationships as URIs, sub-entities named for themselves")
    func objects() throws {
        let store = try open("SampleModel2_V1")
        let book1 = try ManagedObjectID(uriRepresentation: "x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/Book/p1")
        let snapshot = try #require(try store.objects([book1])[book1])
        #expect(snapshot.attributes["title"] == .string("title 2 - author 2"))
        #expect(snapshot.attributes["price"] == .decimal(10.11))
        if case .uuid = snapshot.attributes["uniqueID"] {} else { Issue.record("uniqueID is not a UUID") }
        if case .transformable(let data) = snapshot.attributes["cover"] { #expect(data.starts(with: Data("bplist00".utf8))) }
        else { Issue.record("cover is not transformable data") }
        #expect(snapshot.toOne["author"]?.uriRepresentation == "x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/Author/p1")
        #expect(snapshot.version == 1)

        let raw = try DatabaseQueue(path: store.path, configuration: { var c = Configuration(); c.readonly = true; return c }())
        let (graphicKey, pageKeys, publishedAt) = try raw.read { db in
            (try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ZBOOK WHERE Z_ENT = 2")!,
             try Int64.fetchAll(db, sql: "SELECT Z_PK FROM ZPAGE WHERE ZBOOK = 1 ORDER BY Z_PK"),
             try Double.fetchOne(db, sql: "SELECT ZPUBLISHEDAT FROM ZBOOK WHERE Z_PK = 1")!)
        }
        #expect(snapshot.attributes["publishedAt"] == .date(Date(timeIntervalSinceReferenceDate: publishedAt)))
        #expect(snapshot.toMany["pages"]?.map(\.primaryKey) == pageKeys)
        #expect(snapshot.toMany["pages"]?.allSatisfy { $0.entityName == "Page" } == true)

        // The GraphicNovel row is …/GraphicNovel/p<n>, never …/Book/p<n>.
        let graphic = store.objectID(entity: "GraphicNovel", primaryKey: graphicKey)
        #expect(graphic.uriRepresentation == "x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/GraphicNovel/p\(graphicKey)")
        let asBook = store.objectID(entity: "Book", primaryKey: graphicKey)
        let found = try store.objects([graphic, asBook])
        #expect(found[graphic]?.attributes["isBlackAndWhite"] != nil)
        #expect(found[asBook] == nil)
        let pages = try store.read { try $0.objects(ofEntity: "Page", limit: 5000) }
        #expect(pages.contains { $0.toOne["book"] == graphic })
    }

    @Test("bulk fetch of every object equals a row-by-row raw SQL read", arguments: Fixtures.storeNames)
    func everyObjectMatchesRawRows(name: String) throws {
        let store = try open(name)
        let raw = try DatabaseQueue(path: store.path, configuration: { var c = Configuration(); c.readonly = true; return c }())
        for entity in store.model.entities where !entity.isAbstract {
            let all = try store.read { try $0.objects(ofEntity: entity.name, limit: 100_000) }
            let mine = all.filter { $0.entityName == entity.name }
            let table = try #require(store.layout.table(for: entity.name, model: store.model)).name
            let number = try #require(store.layout.entityNumbers[entity.name])
            let rows = try raw.read { db in try Row.fetchAll(db, sql: "SELECT * FROM \(table) WHERE Z_ENT = ? ORDER BY Z_PK", arguments: [number]) }
            #expect(mine.map(\.objectID.primaryKey) == rows.map { $0["Z_PK"] as Int64 }, "\(name) \(entity.name)")
            // Every object is found again by URI in one bulk call, identical.
            let byID = try store.objects(mine.map(\.objectID))
            #expect(byID.count == mine.count)
            for (snapshot, row) in zip(mine, rows) {
                #expect(byID[snapshot.objectID] == snapshot)
                for attribute in store.model.allAttributes(of: entity.name) where attribute.isStored && attribute.type == .string {
                    let column = "Z" + attribute.name.uppercased()
                    #expect(snapshot.attributes[attribute.name]?.stringValue == row[column] as String?, "\(entity.name).\(attribute.name)")
                }
            }
        }
    }

    @Test("SampleModel_V2 maps the renamed LuxuryCar to the stale ExpensiveSportCar row of Z_PRIMARYKEY")
    func renamedEntity() throws {
        let store = try open("SampleModel_V2")
        #expect(store.model.entity(named: "LuxuryCar") != nil)
        #expect(store.model.entity(named: "ExpensiveSportCar") == nil)
        #expect(store.layout.entityNumbers["LuxuryCar"] == 3)
        let cars = try store.read { try $0.objects(ofEntity: "Car", limit: 1000) }
        #expect(cars.count == 125)
        #expect(cars.contains { $0.entityName == "LuxuryCar" })
        #expect(!cars.contains { $0.entityName == "ExpensiveSportCar" })
    }

    @Test("history: transaction 1 of SampleModel2_V1 with its 5,468 inserts and interned strings")
    func history() throws {
        let store = try open("SampleModel2_V1")
        #expect(store.hasHistory)
        let bounds = try store.historyBounds()
        #expect(bounds == HistoryBounds(oldest: 1, newest: 1))
        let transactions = try store.transactions(after: 0)
        #expect(transactions.count == 1)
        let transaction = try #require(transactions.first)
        #expect(transaction.number == 1)
        #expect(transaction.bundleID == "com.apple.dt.xctest.tool")
        #expect(transaction.processID == "xctest")
        #expect(transaction.author == nil)
        #expect(transaction.contextName == nil)
        #expect(transaction.timestamp.timeIntervalSinceReferenceDate == 737_057_647.288022)
        #expect(transaction.timestamp.formatted(.iso8601.year().month().day()) == "2024-05-10")
        #expect(transaction.changes.count == 5468)
        #expect(transaction.changes.allSatisfy { $0.type == .insert && $0.updatedProperties == nil })
        let counts = Dictionary(grouping: transaction.changes, by: \.objectID.entityName).mapValues(\.count)
        #expect(counts == ["Book": 51, "GraphicNovel": 1, "Feedback": 444, "Page": 4970, "Author": 2])
        #expect(try store.transactions(after: 1).isEmpty)
        // Every inserted object is still there.
        let found = try store.objects(transaction.changes.map(\.objectID), relationships: .toOneOnly)
        #expect(found.count == 5468)
    }

    @Test("stores without history say so", arguments: ["SampleModel_V1", "SampleModel_V2", "SampleModel3_V1"])
    func noHistory(name: String) throws {
        let store = try open(name)
        #expect(!store.hasHistory)
        #expect(throws: CoreDataStoreError.historyNotTracked(path: store.path)) { try store.transactions(after: 0) }
    }

    @Test("a model file that matches is accepted; one that does not is reported precisely")
    func modelFiles() throws {
        let models = Fixtures.models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel")
        let v1 = try open("SampleModel_V1", model: models.appendingPathComponent("SampleModel.xcdatamodel__contents").path)
        #expect(v1.model.source == .modelFile(path: models.appendingPathComponent("SampleModel.xcdatamodel__contents").path))
        #expect(try v1.read { try $0.count(ofEntity: "ExpensiveSportCar") } >= 0)
        do {
            _ = try open("SampleModel_V1", model: models.appendingPathComponent("SampleModel2.xcdatamodel__contents").path)
            Issue.record("a mismatching model was accepted")
        } catch let CoreDataStoreError.modelMismatch(differences) {
            #expect(differences.contains("Car.color is in the store but not in the model"))
            #expect(differences.contains("Person.id is in the store but not in the model"))
        }
        do {
            _ = try open("SampleModel3_V1", model: models.appendingPathComponent("SampleModel.xcdatamodel__contents").path)
            Issue.record("a model of another app was accepted")
        } catch let CoreDataStoreError.modelMismatch(differences) {
            #expect(differences.contains("entity User is in the store but not in the model"))
            #expect(differences.contains("entity Car is in the model but not in the store"))
        }
    }

    @Test("without Z_MODELCACHE the model is inferred from the schema and flagged")
    func inferredModel() throws {
        let path = try Fixtures.copyStore("SampleModel2_V1", to: directory)
        let writable = try DatabaseQueue(path: path)
        try writable.write { db in try db.execute(sql: "DELETE FROM Z_MODELCACHE") }
        try writable.close()
        let store = try PersistentStore(path: path)
        #expect(store.model.source == .schema)
        #expect(!store.notes.isEmpty)
        #expect(store.model.entity(named: "Page")?.relationships.map(\.name) == ["book"])
        #expect(store.model.entity(named: "Book")?.attributes.map(\.name).contains("title") == true)
        let page = try #require(try store.read { try $0.objects(ofEntity: "Page", limit: 1) }.first)
        #expect(page.toOne["book"] != nil)
    }
}
