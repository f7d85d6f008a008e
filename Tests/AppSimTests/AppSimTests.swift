import CoreDataStore
import CZlib
import Foundation
import GRDB
import Testing
import TestScratch

/// Runs the built `appsim` and checks what it wrote through the store reader.
@Suite("appsim and the Places Corpus", .serialized, .ownThread)
struct AppSimTests {
    static let projectRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let corpus = projectRoot.appendingPathComponent("Corpus")
    static let executable: URL = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("appsim")
        return FileManager.default.isExecutableFile(atPath: beside.path) ? beside : projectRoot.appendingPathComponent(".build/debug/appsim")
    }()

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile(), err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// The small store, built once for the suite (in the process's scratch folder, removed at exit).
    static let store: String = {
        let path = Scratch.folder.appendingPathComponent("appsim-\(UUID().uuidString).sqlite").path
        _ = try? run(["corpus", "--size", "small", "--out", path])
        return path
    }()

    static func tsv(_ name: String) throws -> [[String]] {
        var data = try Data(contentsOf: corpus.appendingPathComponent(name))
        if name.hasSuffix(".gz") {
            var output: UnsafeMutablePointer<UInt8>?
            var length = 0
            let status = data.withUnsafeBytes { czlib_gzip_inflate($0.bindMemory(to: UInt8.self).baseAddress, $0.count, 1 << 30, &output, &length) }
            guard status == CZLIB_OK, let output else { throw CocoaError(.fileReadCorruptFile) }
            data = Data(bytesNoCopy: output, count: length, deallocator: .free)
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst().map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test("the Corpus store reads back: every place, every country, relationships both ways")
    func corpusReadsBack() throws {
        let store = try PersistentStore(path: Self.store)
        #expect(store.model.source == .modelCache)
        #expect(store.model.entity(named: "Place")?.attributes.filter(\.isIndexedBySpotlight).map(\.name) == ["alternateNames", "asciiName", "name"])
        let places = try Self.tsv("places.tsv.gz"), countries = try Self.tsv("countries.tsv")
        let (placeObjects, countryObjects) = try store.read { snapshot throws in
            (try snapshot.objects(ofEntity: "Place", limit: 1_000_000, relationships: .toOneOnly),
             try snapshot.objects(ofEntity: "Country", limit: 1_000, relationships: .all))
        }
        #expect(placeObjects.count == places.count && countryObjects.count == countries.count)
        let countryByID = Dictionary(countryObjects.map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
        for (row, object) in zip(places, placeObjects) { // both in geonameid / insertion order
            #expect(object.attributes["geonameID"] == .integer(Int64(row[0]) ?? -1))
            #expect(object.attributes["name"] == .string(row[1]) && object.attributes["asciiName"] == .string(row[2]))
            #expect(object.attributes["latitude"] == .double(Double(row[3]) ?? .nan) && object.attributes["longitude"] == .double(Double(row[4]) ?? .nan))
            #expect(object.attributes["population"] == .integer(Int64(row[6]) ?? -1) && object.attributes["timeZone"] == .string(row[7]))
            #expect(object.attributes["alternateNames"] == .string(row[8].components(separatedBy: "|").filter { !$0.isEmpty }.joined(separator: ", ")))
            let country = object.toOne["country"].flatMap { countryByID[$0] }
            #expect(country?.attributes["code"]?.stringValue == row[5], "\(row[1])")
            #expect(country?.toMany["places"]?.contains(object.objectID) == true)
        }
        #expect(countryObjects.reduce(0) { $0 + ($1.toMany["places"]?.count ?? 0) } == places.count)
        let integrity = try DatabaseQueue(path: Self.store).read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == ["ok"])
    }

    @Test("appsim edit: every logged save is one history transaction with exactly its changes")
    func editHistory() throws {
        let store = try PersistentStore(path: Self.store)
        let before = try store.historyBounds().newest
        let log = Scratch.folder.appendingPathComponent("edits-\(UUID().uuidString).jsonl").path
        let result = try Self.run(["edit", "--store", Self.store, "--rate", "150", "--duration", "2", "--seed", "3", "--log", log])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("300 saves"))
        let entries = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(entries.count == 300)
        var token = before
        var transactions: [HistoryTransaction] = []
        while case let page = try store.transactions(after: token, limit: 100), let last = page.last {
            transactions += page
            token = last.number
        }
        #expect(transactions.count == 300)
        for (entry, transaction) in zip(entries, transactions) {
            #expect(entry["transaction"] as? Int == Int(transaction.number))
            #expect(transaction.author == "appsim" && transaction.contextName == "editor")
            for (key, type) in [("inserted", HistoryChange.ChangeType.insert), ("updated", .update), ("deleted", .delete)] {
                let logged = Set(entry[key] as? [String] ?? [])
                let recorded = Set(transaction.changes.filter { $0.type == type }.map(\.objectID.uriRepresentation))
                #expect(logged == recorded, "\(entry["operation"] ?? "") \(key) in transaction \(transaction.number)")
            }
        }
        let operations = Set(entries.compactMap { $0["operation"] as? String })
        #expect(operations == ["insert", "rename", "move", "reparent", "delete", "rename-country"])
        let integrity = try DatabaseQueue(path: Self.store).read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == ["ok"])
    }

    @Test("missing benchmark data and bad options say what to do")
    func errors() throws {
        let directory = Scratch.folder.appendingPathComponent("appsim-corpus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["countries.tsv", "places.tsv.gz", "Places.xcdatamodeld"] {
            try FileManager.default.copyItem(at: Self.corpus.appendingPathComponent(name), to: directory.appendingPathComponent(name))
        }
        let out = directory.appendingPathComponent("full.sqlite").path
        let full = try Self.run(["corpus", "--size", "full", "--corpus", directory.path, "--out", out])
        #expect(full.status == 66 && full.errors.contains("scripts/derive-corpus full"))
        #expect(try Self.run(["corpus", "--size", "huge", "--out", out]).status == 64)
        #expect(try Self.run(["edit", "--store", "/nonexistent.sqlite"]).status == 66)
        #expect(try Self.run(["edit", "--store", Self.store, "--rate", "0"]).status == 64)
    }
}
