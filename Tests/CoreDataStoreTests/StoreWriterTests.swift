import CoreDataStoreWriter
@testable import CoreDataStore
import Foundation
import GRDB
import Testing
import SeededRandom

@Suite("Writer: saves, history, delete rules")
struct StoreWriterTests {
    let directory = Fixtures.temporaryDirectory()

    func newStore(_ name: String = "atlas") throws -> (StoreWriter, PersistentStore) {
        let path = directory.appendingPathComponent("\(name).sqlite").path
        let writer = try StoreWriter.create(at: path, model: try TestModels.atlas())
        return (writer, try PersistentStore(path: path))
    }

    @Test("relationships of every kind keep their inverses; history records both sides")
    func relationshipKinds() throws {
        let (writer, store) = try newStore()
        var save = SaveRequest(author: "tester", contextName: "main", bundleID: "org.searchlight.tests", processID: "xctest")
        let japan = save.insert("Country", attributes: ["code": .string("JP"), "name": .string("Japan")])
        let tokyo = save.insert("City", attributes: ["name": .string("東京"), "latitude": .double(35.6895), "longitude": .double(139.69171),
                                                     "identifier": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)],
                                relationships: ["country": .toOne(japan), "capitalOf": .toOne(japan)])
        let yokohama = save.insert("Place", attributes: ["name": .string("横浜"), "population": .integer(3_700_000)],
                                   relationships: ["country": .toOne(japan)])
        save.insert("Tag", attributes: ["name": .string("port")], relationships: ["places": .toMany([yokohama, tokyo])])
        let list = save.insert("Playlist", attributes: ["title": .string("trip")])
        let entries = (1...3).map { save.insert("Entry", attributes: ["title": .string("e\($0)")]) }
        save.update(list, relationships: ["entries": .toMany([entries[2], entries[0], entries[1]])])
        let result = try writer.save(save)
        #expect(result.transactionNumber == 1)
        let ids = result.insertedObjectIDs
        #expect(ids.map(\.entityName) == ["Country", "City", "Place", "Tag", "Playlist", "Entry", "Entry", "Entry"])
        #expect(ids[1].primaryKey != ids[2].primaryKey) // City and Place share ZPLACE and its keys

        let objects = try store.objects(ids)
        let country = try #require(objects[ids[0]])
        #expect(Set(country.toMany["places"] ?? []) == [ids[1], ids[2]])
        #expect(country.toOne["capital"] == ids[1])
        #expect(objects[ids[1]]?.toOne["capitalOf"] == ids[0])
        #expect(objects[ids[1]]?.toOne["country"]?.uriRepresentation == ids[0].uriRepresentation)
        #expect(Set(objects[ids[3]]?.toMany["places"] ?? []) == [ids[1], ids[2]])
        #expect(objects[ids[2]]?.toMany["tags"] == [ids[3]])
        #expect(objects[ids[4]]?.toMany["entries"] == [ids[7], ids[5], ids[6]]) // ordered as saved
        #expect(objects[ids[2]]?.attributes["visited"] == .boolean(false)) // default value
        #expect(objects[ids[1]]?.attributes["isCapital"] == .boolean(false))
        #expect(objects[ids[0]]?.attributes["population"] == .integer(0))
        #expect(objects[ids[1]]?.attributes["note"] == nil) // transient: no column

        let transaction = try #require(try store.transactions(after: 0).first)
        #expect(transaction.author == "tester" && transaction.contextName == "main")
        #expect(transaction.bundleID == "org.searchlight.tests" && transaction.processID == "xctest")
        #expect(transaction.changes.map(\.objectID) == ids && transaction.changes.allSatisfy { $0.type == .insert })

        // Re-parent Yokohama to a new country: both countries change, history says so.
        var move = SaveRequest()
        let korea = move.insert("Country", attributes: ["code": .string("KR")])
        move.update(.saved(ids[2]), attributes: ["name": .string("Yokohama")], relationships: ["country": .toOne(korea)])
        let moved = try writer.save(move)
        let second = try #require(try store.transactions(after: 1).first)
        let types = Dictionary(second.changes.map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(types[moved.insertedObjectIDs[0]]?.type == .insert)
        #expect(types[ids[2]]?.type == .update)
        #expect(Set(types[ids[2]]?.updatedProperties ?? []) == ["country", "name"])
        #expect(types[ids[0]]?.type == .update)
        #expect(types[ids[0]]?.updatedProperties == ["places"])
        let after = try store.objects([ids[0], ids[2]])
        #expect(after[ids[0]]?.toMany["places"] == [ids[1]])
        #expect(after[ids[2]]?.version == 2)
        #expect(after[ids[0]]?.version == 2)

        // One-to-one: making Yokohama the capital takes the role from Tokyo.
        var capital = SaveRequest()
        capital.update(.saved(ids[0]), relationships: ["capital": .toOne(.saved(ids[2]))])
        try writer.save(capital)
        let capitals = try store.objects([ids[0], ids[1], ids[2]])
        #expect(capitals[ids[0]]?.toOne["capital"] == ids[2])
        #expect(capitals[ids[2]]?.toOne["capitalOf"] == ids[0])
        #expect(capitals[ids[1]]?.toOne["capitalOf"] == nil)

        // Delete rules: Deny refuses, Cascade removes the places, Nullify clears tags.
        var denied = SaveRequest()
        denied.delete(ids[4])
        #expect(throws: CoreDataStoreError.self) { try writer.save(denied) }
        var cascade = SaveRequest()
        cascade.delete(ids[0])
        let deleted = try writer.save(cascade)
        #expect(Set(deleted.deletedObjectIDs) == [ids[0], ids[1]])
        #expect(deleted.updatedObjectIDs.contains(ids[3])) // the tag lost Tokyo
        let remaining = try store.objects(ids)
        #expect(remaining[ids[0]] == nil && remaining[ids[1]] == nil)
        #expect(remaining[ids[3]]?.toMany["places"] == [ids[2]])
        #expect(remaining[ids[2]]?.toOne["capitalOf"] == nil)
        let deletion = try #require(try store.transactions(after: 3).first)
        let tokyoDelete = try #require(deletion.changes.first { $0.objectID == ids[1] })
        #expect(tokyoDelete.type == .delete)
        #expect(tokyoDelete.tombstone == ["identifier": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)])
        #expect(try writer.integrityCheck() == "ok")
    }

    @Test("invalid saves are refused whole and leave the store untouched")
    func validation() throws {
        let (writer, store) = try newStore()
        var seed = SaveRequest()
        let country = seed.insert("Country", attributes: ["code": .string("FR")])
        let seeded = try writer.save(seed).insertedObjectIDs[0]
        _ = country
        let cases: [(String, (inout SaveRequest) -> Void)] = [
            ("unknown entity", { $0.insert("Planet") }),
            ("unknown property", { $0.insert("Tag", attributes: ["name": .string("x"), "colour": .string("red")]) }),
            ("wrong type", { $0.insert("Tag", attributes: ["name": .integer(3)]) }),
            ("missing required", { $0.insert("Tag") }),
            ("transient", { $0.insert("Place", attributes: ["name": .string("x"), "note": .string("n")]) }),
            ("missing object", { $0.update(.saved(ManagedObjectID(storeUUID: writer.storeUUID, entityName: "Tag", primaryKey: 99)), attributes: ["name": .string("y")]) }),
            ("wrong destination", { save in
                let tag = save.insert("Tag", attributes: ["name": .string("t")])
                save.insert("Place", attributes: ["name": .string("p")], relationships: ["country": .toOne(tag)])
            }),
            ("to-many as to-one", { $0.update(.saved(seeded), relationships: ["places": .toOne(nil)]) }),
            ("unique violation", { $0.insert("Country", attributes: ["code": .string("FR")]) }),
            ("foreign store", { $0.delete(ManagedObjectID(storeUUID: "OTHER", entityName: "Tag", primaryKey: 1)) }),
        ]
        for (label, build) in cases {
            var save = SaveRequest()
            build(&save)
            #expect(throws: CoreDataStoreError.self, "\(label)") { try writer.save(save) }
        }
        #expect(try store.historyBounds() == HistoryBounds(oldest: 1, newest: 1))
        #expect(try store.read { try $0.count(ofEntity: "Tag") } == 0)
        #expect(try store.read { try $0.count(ofEntity: "Country") } == 1)
    }

    @Test("hundreds of random saves read back object for object and change for change")
    func randomSaves() throws {
        let (writer, store) = try newStore()
        var generator = SeededGenerator(seed: 2024)
        var mirror: [ManagedObjectID: [String: AttributeValue]] = [:] // what we last wrote, per live object
        var results: [SaveResult] = []
        for round in 0..<250 {
            var save = SaveRequest(author: round % 2 == 0 ? "app" : nil, bundleID: "org.searchlight.tests")
            var written: [ObjectReference: [String: AttributeValue]] = [:]
            let live = mirror.keys.sorted()
            let countries = live.filter { $0.entityName == "Country" }
            let places = live.filter { $0.entityName == "Place" || $0.entityName == "City" }
            let tags = live.filter { $0.entityName == "Tag" }
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0:
                    let values: [String: AttributeValue] = ["code": .string("C\(round)-\(Int.random(in: 0..<1_000_000, using: &generator))"), "name": .string("Country \(round)")]
                    written[save.insert("Country", attributes: values)] = values
                case 1, 2, 3:
                    let entity = Bool.random(using: &generator) ? "Place" : "City"
                    let values: [String: AttributeValue] = ["name": .string("Place \(round) ü"), "latitude": .double(Double.random(in: -90...90, using: &generator)),
                                                            "updatedAt": .date(Date(timeIntervalSinceReferenceDate: Double(round)))]
                    let country: RelationshipValue = .toOne(countries.randomElement(using: &generator).map(ObjectReference.saved))
                    written[save.insert(entity, attributes: values, relationships: ["country": country])] = values
                case 4:
                    let values: [String: AttributeValue] = ["name": .string("tag\(round)")]
                    let members = places.shuffled(using: &generator).prefix(3).map(ObjectReference.saved)
                    written[save.insert("Tag", attributes: values, relationships: ["places": .toMany(members)])] = values
                case 5, 6:
                    guard let place = places.randomElement(using: &generator) else { continue }
                    let values: [String: AttributeValue] = ["name": .string("Renamed \(round)"), "population": .integer(Int64(round))]
                    save.update(.saved(place), attributes: values, relationships: ["country": .toOne(countries.randomElement(using: &generator).map(ObjectReference.saved))])
                    written[.saved(place), default: [:]].merge(values) { _, new in new }
                case 7:
                    guard let tag = tags.randomElement(using: &generator) else { continue }
                    save.update(.saved(tag), relationships: ["places": .toMany(places.shuffled(using: &generator).prefix(2).map(ObjectReference.saved))])
                case 8:
                    if let place = places.randomElement(using: &generator) { save.delete(place) }
                default:
                    if Int.random(in: 0..<4, using: &generator) == 0, let country = countries.randomElement(using: &generator) { save.delete(country) }
                }
            }
            guard !save.isEmpty else { continue }
            let result = try writer.save(save)
            results.append(result)
            for (reference, values) in written {
                switch reference {
                case .inserted(let index) where result.discardedObjectIDs.contains(result.insertedObjectIDs[index]): continue
                case .inserted(let index): mirror[result.insertedObjectIDs[index]] = values
                case .saved(let id): mirror[id]?.merge(values) { _, new in new }
                }
            }
            for id in result.deletedObjectIDs { mirror[id] = nil }
        }
        // Object for object: exactly the live objects exist, with the attributes we wrote.
        let all = try store.read { snapshot throws in
            try ["Country", "Place", "Tag"].flatMap { try snapshot.objects(ofEntity: $0, limit: 1_000_000) }
        }
        #expect(Set(all.map(\.objectID)) == Set(mirror.keys))
        let byID = Dictionary(all.map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
        for (id, values) in mirror {
            for (name, value) in values { #expect(byID[id]?.attributes[name] == value, "\(id) \(name)") }
        }
        // Relationships agree from both sides.
        for object in all {
            if let country = object.toOne["country"] { #expect(byID[country]?.toMany["places"]?.contains(object.objectID) == true) }
            for place in object.toMany["places"] ?? [] {
                let back = byID[place]
                #expect(back?.toOne["country"] == object.objectID || back?.toMany["tags"]?.contains(object.objectID) == true)
            }
            for tag in object.toMany["tags"] ?? [] { #expect(byID[tag]?.toMany["places"]?.contains(object.objectID) == true) }
        }
        // Change for change: every save is one transaction with exactly its inserts, updates and deletes.
        var history: [HistoryTransaction] = []
        var token: Int64 = 0
        while case let page = try store.transactions(after: token, limit: 40), let last = page.last {
            history += page
            token = last.number
        }
        #expect(history.count == results.count)
        #expect(results.contains { !$0.discardedObjectIDs.isEmpty }) // the seed exercises cascades into fresh inserts
        for (transaction, result) in zip(history, results) {
            #expect(transaction.number == result.transactionNumber)
            #expect(transaction.changes.filter { $0.type == .insert }.map(\.objectID) == result.insertedObjectIDs.filter { !result.discardedObjectIDs.contains($0) })
            #expect(Set(transaction.changes.filter { $0.type == .update }.map(\.objectID)) == Set(result.updatedObjectIDs))
            #expect(Set(transaction.changes.filter { $0.type == .delete }.map(\.objectID)) == Set(result.deletedObjectIDs))
        }
        #expect(try writer.integrityCheck() == "ok")
    }

    @Test("purging history moves the oldest transaction and expires older tokens")
    func purge() throws {
        let (writer, store) = try newStore()
        for index in 0..<10 {
            var save = SaveRequest()
            save.insert("Tag", attributes: ["name": .string("t\(index)")])
            try writer.save(save)
        }
        #expect(try store.historyBounds() == HistoryBounds(oldest: 1, newest: 10))
        #expect(try writer.purgeHistory(through: 6) == 6)
        let bounds = try store.historyBounds()
        #expect(bounds == HistoryBounds(oldest: 7, newest: 10))
        #expect(bounds.canResume(from: 6) && bounds.canResume(from: 10))
        #expect(!bounds.canResume(from: 5) && !bounds.canResume(from: 11))
        #expect(try store.transactions(after: 0).map(\.number) == [7, 8, 9, 10])
        #expect(try writer.purgeHistory(through: 10) == 4)
        let empty = try store.historyBounds()
        #expect(empty == HistoryBounds(oldest: nil, newest: 10))
        #expect(empty.canResume(from: 10) && !empty.canResume(from: 9))
        var save = SaveRequest()
        save.insert("Tag", attributes: ["name": .string("after purge")])
        #expect(try writer.save(save).transactionNumber == 11) // numbers are never reused
    }

    @Test("readers beside a writer always see whole saves")
    func readersBesideWriter() async throws {
        let (writer, store) = try newStore()
        let saves = 150
        async let written: Void = Task.detached {
            for round in 0..<saves {
                var save = SaveRequest()
                for index in 0..<10 { save.insert("Tag", attributes: ["name": .string("\(round)-\(index)")]) }
                try writer.save(save)
            }
        }.value
        var observations = 0
        var finished = false
        while !finished {
            let (count, newest) = try store.read { snapshot throws in
                (try snapshot.count(ofEntity: "Tag"), try snapshot.historyBounds().newest)
            }
            #expect(count == Int(newest) * 10) // never half a save
            observations += 1
            finished = newest == Int64(saves)
            await Task.yield()
        }
        try await written
        #expect(observations > 1)
    }
}

@Suite("Writer and reader: layout edge cases")
struct LayoutEdgeCaseTests {
    let directory = Fixtures.temporaryDirectory()

    @Test("sibling sub-entities declaring the same property get suffixed columns and read back separately")
    func suffixedColumns() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Media", isAbstract: true, attributes: [AttributeDescription(name: "created", type: .date)]),
            EntityDescription(name: "Photo", superentityName: "Media", attributes: [AttributeDescription(name: "title", type: .string)]),
            EntityDescription(name: "Video", superentityName: "Media", attributes: [
                AttributeDescription(name: "title", type: .string), AttributeDescription(name: "seconds", type: .double),
            ]),
        ])
        let layout = StoreLayout(model: model)
        #expect(layout.storage(of: "title", entity: "Photo", model: model) == .attribute(columns: ["ZTITLE"]))
        #expect(layout.storage(of: "title", entity: "Video", model: model) == .attribute(columns: ["ZTITLE1"]))
        let path = directory.appendingPathComponent("media.sqlite").path
        let writer = try StoreWriter.create(at: path, model: model)
        var save = SaveRequest()
        save.insert("Photo", attributes: ["title": .string("sunrise")])
        save.insert("Video", attributes: ["title": .string("waves"), "seconds": .double(12.5)])
        let ids = try writer.save(save).insertedObjectIDs
        let store = try PersistentStore(path: path)
        let objects = try store.objects(ids)
        #expect(objects[ids[0]]?.attributes["title"] == .string("sunrise"))
        #expect(objects[ids[1]]?.attributes["title"] == .string("waves"))
        #expect(objects[ids[1]]?.attributes["seconds"] == .double(12.5))
        #expect(try store.read { try $0.count(ofEntity: "Media") } == 2)
        let columns = try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('ZMEDIA')") }
        #expect(columns == ["Z_PK", "Z_ENT", "Z_OPT", "ZCREATED", "ZSECONDS", "ZTITLE", "ZTITLE1"])
    }

    @Test("reading never changes the store file", .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
    func readerNeverWrites() throws {
        let path = try Fixtures.copyStore("SampleModel2_V1", to: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let store = try PersistentStore(path: path)
        _ = try store.transactions(after: 0)
        for entity in store.model.entities { _ = try store.read { try $0.objects(ofEntity: entity.name, limit: 10_000) } }
        _ = try store.dataVersion()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let walPath = path + "-wal"
        let walSize = (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int) ?? 0
        #expect(walSize == 0) // nothing was written to the log either
    }
}
