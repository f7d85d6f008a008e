import CoreDataStoreWriter
@testable import CoreDataStore
import Foundation
import GRDB
import Testing

@Suite("Writer: appending saves to copies of Apple-written stores", .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
struct AppleStoreAppendTests {
    let directory = Fixtures.temporaryDirectory()

    @Test("saves appended to SampleModel2_V1 read back identically, triggers included")
    func appendToSampleModel2() throws {
        let path = try Fixtures.copyStore("SampleModel2_V1", to: directory)
        let writer = try StoreWriter(path: path)
        let store = try PersistentStore(path: path)
        let before = try store.read { snapshot throws in try snapshot.objects(ofEntity: "Book", limit: 100) }
        let book1 = try #require(before.first { $0.objectID.primaryKey == 1 })
        let pagesCount = try #require(book1.attributes["pagesCount"]?.doubleValue)
        let cover = Data("bplist00 cover".utf8)

        var save = SaveRequest(author: "searchlight", bundleID: "org.searchlight.tests", processID: "swift-test")
        let author = save.insert("Author", attributes: ["alias": .string("newcomer"), "age": .integer(33)])
        let book = save.insert("Book", attributes: [
            "title": .string("title 99 - newcomer"), "price": .decimal(12.5), "cover": .transformable(cover),
            "publishedAt": .date(Date(timeIntervalSinceReferenceDate: 800_000_000)),
            "uniqueID": .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000099")!),
        ], relationships: ["author": .toOne(author)])
        for number in 1...3 {
            save.insert("Page", attributes: ["number": .integer(Int64(number)), "isBookmarked": .boolean(number == 2), "content": .transformable(cover)],
                        relationships: ["book": .toOne(book)])
        }
        save.update(.saved(book1.objectID), attributes: ["title": .string("title 2 - renamed")])
        let doomedPage = try #require(book1.toMany["pages"]?.first)
        save.delete(doomedPage)
        let result = try writer.save(save)
        #expect(result.transactionNumber == 2)
        #expect(try writer.integrityCheck() == "ok")

        let ids = result.insertedObjectIDs
        #expect(ids[0].primaryKey == 3 && ids[1].primaryKey == 53) // Z_MAX continued: Writer had 2, Book 52
        let objects = try store.objects(ids + [book1.objectID, doomedPage])
        #expect(objects[doomedPage] == nil)
        #expect(objects[ids[1]]?.attributes["title"] == .string("title 99 - newcomer"))
        #expect(objects[ids[1]]?.attributes["cover"] == .transformable(cover))
        #expect(objects[ids[1]]?.attributes["pagesCount"] == .integer(3)) // Core Data's own triggers ran
        #expect(objects[ids[1]]?.toOne["author"] == ids[0])
        #expect(Set(objects[ids[1]]?.toMany["pages"] ?? []) == Set(ids[2...4]))
        #expect(objects[ids[0]]?.toMany["books"] == [ids[1]])
        #expect(objects[ids[0]]?.attributes["age"] == .integer(33))
        #expect(objects[ids[3]]?.attributes["isBookmarked"] == .boolean(true))
        #expect(objects[book1.objectID]?.attributes["title"] == .string("title 2 - renamed"))
        #expect(objects[book1.objectID]?.attributes["pagesCount"]?.doubleValue == pagesCount - 1)
        #expect(objects[book1.objectID]?.version == 2)

        let transactions = try store.transactions(after: 0)
        #expect(transactions.map(\.number) == [1, 2])
        #expect(transactions[0].changes.count == 5468) // Apple's transaction untouched
        let appended = transactions[1]
        #expect(appended.author == "searchlight" && appended.bundleID == "org.searchlight.tests" && appended.processID == "swift-test")
        #expect(appended.changes.filter { $0.type == .insert }.map(\.objectID) == ids)
        #expect(appended.changes.filter { $0.type == .update }.map(\.objectID) == [book1.objectID])
        #expect(Set(appended.changes.first { $0.type == .update }?.updatedProperties ?? []) == ["pages", "title"])
        #expect(appended.changes.filter { $0.type == .delete }.map(\.objectID) == [doomedPage])

        // The strings table interned our names beside Apple's, and the file stays a valid store.
        let strings = try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: "SELECT ZNAME FROM ATRANSACTIONSTRING ORDER BY Z_PK") }
        #expect(strings == ["com.apple.dt.xctest.tool", "xctest", "searchlight", "org.searchlight.tests", "swift-test"])
        let reopened = try PersistentStore(path: path)
        #expect(try reopened.historyBounds() == HistoryBounds(oldest: 1, newest: 2))
    }

    @Test("stores without history accept saves and still have no history", arguments: ["SampleModel_V1", "SampleModel3_V1"])
    func appendWithoutHistory(name: String) throws {
        let path = try Fixtures.copyStore(name, to: directory)
        let writer = try StoreWriter(path: path)
        #expect(!writer.tracksHistory)
        var save = SaveRequest()
        if name == "SampleModel3_V1" {
            save.insert("User", attributes: ["name": .string("Zoë")])
        } else {
            save.insert("Person", attributes: ["firstName": .string("Ada"), "lastName": .string("Lovelace"),
                                               "id": .uuid(UUID()), "updatedAt": .date(Date())])
        }
        let result = try writer.save(save)
        #expect(result.transactionNumber == nil)
        #expect(try writer.integrityCheck() == "ok")
        let store = try PersistentStore(path: path)
        #expect(try store.objects(result.insertedObjectIDs).count == 1)
        #expect(!store.hasHistory)
    }
}
