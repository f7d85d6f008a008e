@testable import CoreDataStore
import Foundation
import GRDB
import Testing
import SeededRandom

@Suite("Bad input gets a clear error")
struct BadInputTests {
    let directory = Fixtures.temporaryDirectory()

    func write(_ bytes: Data, named name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try bytes.write(to: url)
        return url.path
    }

    @Test("missing files, directories, empty files, random bytes")
    func notStores() throws {
        #expect(throws: CoreDataStoreError.fileNotFound(path: "/nonexistent/App.sqlite")) { try PersistentStore(path: "/nonexistent/App.sqlite") }
        #expect(throws: CoreDataStoreError.notADatabase(path: directory.path, detail: "it is a directory")) { try PersistentStore(path: directory.path) }
        let empty = try write(Data(), named: "empty.sqlite")
        #expect(throws: CoreDataStoreError.notADatabase(path: empty, detail: "the file is empty")) { try PersistentStore(path: empty) }
        var generator = SeededGenerator(seed: 7)
        let random = try write(Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }), named: "random.sqlite")
        #expect(throws: CoreDataStoreError.notADatabase(path: random, detail: "the file does not start with SQLite's header")) { try PersistentStore(path: random) }
    }

    @Test("a plain SQLite database is not a Core Data store")
    func plainSQLite() throws {
        let path = directory.appendingPathComponent("plain.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)") }
        try queue.close()
        #expect(throws: CoreDataStoreError.notACoreDataStore(path: path, missing: "Z_PRIMARYKEY")) { try PersistentStore(path: path) }
    }

    @Test("truncated stores fail with a message, at open or at read, never a crash",
          .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
    func truncated() throws {
        let original = try Data(contentsOf: Fixtures.stores.appendingPathComponent("SampleModel2_V1.sqlite"))
        for length in [50, 100, 4096, 20_000, original.count / 2, original.count - 4096] {
            let path = try write(original.prefix(length), named: "truncated-\(length).sqlite")
            do {
                let store = try PersistentStore(path: path)
                _ = try store.transactions(after: 0)
                _ = try store.read { try $0.objects(ofEntity: "Page", limit: 10_000) }
                _ = try store.read { try $0.objects(ofEntity: "Book", limit: 10_000) }
            } catch {
                #expect(!error.description.isEmpty)
                if case .database = error { Issue.record("raw database error for truncation at \(length): \(error)") }
            }
        }
    }

    @Test("malformed, temporary and foreign object URIs", arguments: [
        ("", "malformed"), ("http://example.com/Book/p1", "malformed"), ("x-coredata://", "malformed"),
        ("x-coredata://UUID/Book", "malformed"), ("x-coredata://UUID/Book/1", "malformed"),
        ("x-coredata://UUID/Book/p", "malformed"), ("x-coredata://UUID/Book/p-3", "malformed"),
        ("x-coredata://UUID/Book/p0", "malformed"), ("x-coredata://UUID/Bo ok/p1", "malformed"),
        ("x-coredata://UUID/Book/p99999999999999999999", "malformed"), ("x-coredata:///Book/t4F2C", "temporary"),
        ("x-coredata://UUID/Book/t4F2C-11", "temporary"), ("x-coredata://UUID/Book/p12/extra", "malformed"),
    ])
    func uris(uri: String, kind: String) {
        do {
            _ = try ManagedObjectID(uriRepresentation: uri)
            Issue.record("\(uri) was accepted")
        } catch .temporaryObjectID {
            #expect(kind == "temporary")
        } catch .malformedObjectURI(_, let reason) {
            #expect(kind == "malformed")
            #expect(!reason.isEmpty)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("a URI round-trips and another store's URI is refused", .enabled(if: Fixtures.available, Comment(rawValue: Fixtures.skipMessage)))
    func foreignURI() throws {
        let id = try ManagedObjectID(uriRepresentation: "x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/GraphicNovel/p11")
        #expect(id.entityName == "GraphicNovel" && id.primaryKey == 11)
        #expect(id.uriRepresentation == "x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/GraphicNovel/p11")
        let store = try PersistentStore(path: Fixtures.copyStore("SampleModel3_V1", to: directory))
        #expect(throws: CoreDataStoreError.foreignObjectID(uri: id.uriRepresentation, storeUUID: "5443A63D-EF0E-44C2-B216-AE8B5ED2FD09")) {
            try store.validate(id)
        }
    }
}
