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

    @Test("FIFOs, sockets' kin and directories are refused before anything reads them", .timeLimit(.minutes(1)))
    func nonRegularFiles() throws {
        let fifo = directory.appendingPathComponent("pipe.sqlite").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opening a FIFO for reading would block until a writer appears: these must return at once.
        #expect(throws: CoreDataStoreError.unsupportedStore(path: fifo, detail: "it is a FIFO (named pipe), not a regular file")) {
            try PersistentStore(path: fifo)
        }
        #expect(throws: CoreDataStoreError.invalidModelFile(path: fifo, reason: "it is a FIFO (named pipe), not a regular file")) {
            try ManagedObjectModel(contentsOf: fifo)
        }
        let store = try Fixtures.copyStore("SampleModel2_V1", to: directory)
        #expect(mkfifo(store + "-wal", 0o600) == 0)
        #expect(throws: CoreDataStoreError.unsupportedStore(path: store, detail: "its -wal companion is a FIFO (named pipe), not a regular file")) {
            try PersistentStore(path: store)
        }
    }

    @Test("model XML: nesting, element count and entity expansion are bounded")
    func hostileModelXML() throws {
        let deep = Data(("<model>" + String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000) + "</model>").utf8)
        #expect(throws: CoreDataStoreError.invalidModelFile(path: "deep", reason: "the XML nests elements more than 64 deep (at line 1)")) {
            try ManagedObjectModel(modelFileXML: deep, path: "deep")
        }
        let wide = Data(("<model>" + String(repeating: "<entity name=\"E\"/>", count: 300_000) + "</model>").utf8)
        #expect(throws: CoreDataStoreError.invalidModelFile(path: "wide", reason: "the XML has more than 200000 elements (at line 1)")) {
            try ManagedObjectModel(modelFileXML: wide, path: "wide")
        }
        var laughs = "<?xml version=\"1.0\"?><!DOCTYPE m [<!ENTITY l0 \"lol\">"
        for level in 1...9 { laughs += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">" }
        laughs += "]><model><entity name=\"&l9;\"/></model>"
        do {
            _ = try ManagedObjectModel(modelFileXML: Data(laughs.utf8), path: "laughs")
            Issue.record("a billion laughs was accepted")
        } catch {
            guard case .invalidModelFile = error else { Issue.record("unexpected \(error)"); return }
        }
    }

    @Test("property lists: object count, references and nesting are bounded")
    func hostilePropertyLists() throws {
        // One array holding a million references to itself's sibling: refused by the reference budget.
        var objects: [[UInt8]] = []
        let count = 5_000_000
        var array: [UInt8] = [0xAF, 0x13] + withUnsafeBytes(of: UInt32(count).bigEndian, Array.init)
        array += [UInt8](repeating: 1, count: count) // every element is object 1
        objects.append(array)
        objects.append([0x09]) // true
        let plist = Self.binaryPlist(objects, refSize: 1)
        #expect(throws: BinaryPropertyList.DecodingError.self) { try BinaryPropertyList.decode(plist) }
        // Arrays nested 1,000 deep: object i is a one-element array holding object i + 1.
        var chain: [[UInt8]] = []
        for index in 0..<999 {
            let next = UInt16(index + 1)
            chain.append([0xA1, UInt8(next >> 8), UInt8(next & 0xFF)])
        }
        chain.append([0x09])
        do {
            _ = try BinaryPropertyList.decode(Self.binaryPlist(chain, refSize: 2))
            Issue.record("1,000-deep nesting was accepted")
        } catch {
            #expect(error.reason.contains("deep"))
        }
    }

    @Test("a Z_MODELCACHE that inflates past 16 MiB is refused before it is decoded")
    func modelCacheBomb() throws {
        let bomb = RawDeflate.deflate(Data(count: ManagedObjectModel.maximumModelCacheSize + 1))
        #expect(bomb.count < 100_000)
        do {
            _ = try ManagedObjectModel(modelCache: bomb)
            Issue.record("a model cache bomb was decoded")
        } catch {
            #expect("\(error)".contains("exceeds"))
        }
    }

    /// Lays out objects (already encoded, references of `refSize` bytes) as a bplist00 with top object 0.
    static func binaryPlist(_ objects: [[UInt8]], refSize: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        for offset in offsets { bytes += withUnsafeBytes(of: UInt64(offset).bigEndian, Array.init) }
        bytes += [0, 0, 0, 0, 0, 0, 8, UInt8(refSize)]
        bytes += withUnsafeBytes(of: UInt64(objects.count).bigEndian, Array.init)
        bytes += withUnsafeBytes(of: UInt64(0).bigEndian, Array.init)
        bytes += withUnsafeBytes(of: UInt64(tableOffset).bigEndian, Array.init)
        return Data(bytes)
    }
}
