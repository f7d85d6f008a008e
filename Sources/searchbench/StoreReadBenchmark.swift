import ArgumentParser
import CoreDataStore
import CoreDataStoreWriter
import Foundation
import SeededRandom
import GRDBSQLite

/// Reading objects by primary key in batches: the exporter's fetch step.
///
/// Ours: `PersistentStore.objects(_:)` — one read transaction and one `IN (…)` query per batch,
/// decoding every column into typed attributes and object IDs. Baseline: the same queries on
/// SQLite's C API, copying every column into Swift values, nothing else.
struct StoreReadBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store-read",
        abstract: "Bulk reads by primary key through the Core Data store reader versus raw SQLite.")

    @Option(help: "Objects in the generated store.")
    var objects = 100_000

    @Option(help: "Primary keys per batch.")
    var batch = 1_000

    @Option(help: "Timed runs of each side; the best is reported.")
    var runs = 3

    @Option(help: "Folder for the generated store.")
    var workdir = FileManager.default.temporaryDirectory.path

    func run() throws {
        let path = URL(fileURLWithPath: workdir).appendingPathComponent("searchbench-store-\(getpid()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Country", attributes: [
                AttributeDescription(name: "code", type: .string), AttributeDescription(name: "name", type: .string),
            ], relationships: [RelationshipDescription(name: "places", destinationEntityName: "Place", inverseName: "country", isToMany: true)]),
            EntityDescription(name: "Place", attributes: [
                AttributeDescription(name: "name", type: .string), AttributeDescription(name: "asciiName", type: .string),
                AttributeDescription(name: "alternateNames", type: .string), AttributeDescription(name: "population", type: .integer64),
                AttributeDescription(name: "latitude", type: .double), AttributeDescription(name: "longitude", type: .double),
                AttributeDescription(name: "timeZone", type: .string), AttributeDescription(name: "updatedAt", type: .date),
            ], relationships: [RelationshipDescription(name: "country", destinationEntityName: "Country", inverseName: "places")]),
        ])

        // Build the store with the writer, in saves of 5,000 objects with history.
        let writer = try StoreWriter.create(at: path, model: model)
        var generator = SeededGenerator(state: 7)
        var countries: [ManagedObjectID] = []
        let writeSeconds = try Clock.seconds {
            var save = SaveRequest(bundleID: "org.searchlight.searchbench", processID: "searchbench")
            for index in 0..<200 { save.insert("Country", attributes: ["code": .string("C\(index)"), "name": .string("Country \(index)")]) }
            countries = try writer.save(save).insertedObjectIDs
            var inserted = 0
            while inserted < objects {
                var save = SaveRequest(bundleID: "org.searchlight.searchbench", processID: "searchbench")
                for _ in 0..<min(5_000, objects - inserted) {
                    let number = inserted
                    save.insert("Place", attributes: [
                        "name": .string("Place \(number) 東京 Zürich"), "asciiName": .string("Place \(number) Tokyo Zurich"),
                        "alternateNames": .string("Plaza \(number),Platz \(number),広場 \(number)"),
                        "population": .integer(Int64.random(in: 0...10_000_000, using: &generator)),
                        "latitude": .double(Double.random(in: -90...90, using: &generator)),
                        "longitude": .double(Double.random(in: -180...180, using: &generator)),
                        "timeZone": .string("Asia/Tokyo"), "updatedAt": .date(Date(timeIntervalSinceReferenceDate: Double(number))),
                    ], relationships: ["country": .toOne(.saved(countries[number % countries.count]))])
                    inserted += 1
                }
                try writer.save(save)
            }
        }
        try writer.checkpoint()

        let store = try PersistentStore(path: path)
        var ids = try store.read { try $0.objects(ofEntity: "Place", limit: objects, relationships: .toOneOnly) }.map(\.objectID)
        ids.shuffle(using: &generator) // history hands out objects in no useful order
        let batches = stride(from: 0, to: ids.count, by: batch).map { Array(ids[$0..<min($0 + batch, ids.count)]) }

        var oursBest = Double.infinity, rawBest = Double.infinity
        var oursCount = 0, rawCount = 0
        for _ in 0..<runs {
            oursBest = min(oursBest, try Clock.seconds {
                oursCount = 0
                for keys in batches { oursCount += try store.objects(keys, relationships: .toOneOnly).count }
            })
            rawBest = min(rawBest, try Clock.seconds {
                rawCount = try RawReader.read(path: path, batches: batches.map { $0.map(\.primaryKey) })
            })
        }
        guard oursCount == ids.count, rawCount == ids.count else {
            throw ValidationError("read \(oursCount) objects through the reader and \(rawCount) raw, expected \(ids.count)")
        }
        var withToMany = 0.0
        let countryBatches = [countries]
        withToMany = try Clock.seconds { for keys in countryBatches { _ = try store.objects(keys, relationships: .all) } }

        let ours = Double(ids.count) / oursBest, raw = Double(ids.count) / rawBest
        print("store-read: \(grouped(Double(ids.count))) Place objects by primary key, batches of \(batch), random order, best of \(runs)")
        print("machine: \(machineDescription())")
        print("")
        print("| measure | Searchlight | raw SQLite | ratio |")
        print("|---|---:|---:|---:|")
        print("| bulk read by primary key (objects/s) | \(grouped(ours)) | \(grouped(raw)) | \(String(format: "%.2f", ours / raw))× |")
        print("")
        print("writer: \(grouped(Double(objects + 200) / writeSeconds)) objects/s building the store (saves of 5,000, history on)")
        print("to-many: all \(countries.count) countries with their \(grouped(Double(ids.count))) places resolved in \(String(format: "%.3f", withToMany)) s")
    }
}

/// The baseline: the same batched `IN (…)` reads on SQLite's C API, values copied out, nothing else.
enum RawReader {
    static func read(path: String, batches: [[Int64]]) throws -> Int {
        var connection: OpaquePointer?
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db = connection else {
            throw ValidationError("cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        var count = 0
        for keys in batches {
            sqlite3_exec(db, "BEGIN", nil, nil, nil)
            let placeholders = String(repeating: "?, ", count: keys.count - 1) + "?"
            let sql = "SELECT Z_PK, Z_ENT, Z_OPT, ZPOPULATION, ZCOUNTRY, ZLATITUDE, ZLONGITUDE, ZUPDATEDAT, ZALTERNATENAMES, ZASCIINAME, ZNAME, ZTIMEZONE FROM ZPLACE WHERE Z_PK IN (\(placeholders))"
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw ValidationError("prepare failed") }
            for (index, key) in keys.enumerated() { sqlite3_bind_int64(statement, Int32(index + 1), key) }
            var rows: [(Int64, Int64, Int64, Int64, Int64, Double, Double, Double, String, String, String, String)] = []
            rows.reserveCapacity(keys.count)
            while sqlite3_step(statement) == SQLITE_ROW {
                func text(_ column: Int32) -> String {
                    guard let pointer = sqlite3_column_text(statement, column) else { return "" }
                    return String(cString: pointer)
                }
                rows.append((sqlite3_column_int64(statement, 0), sqlite3_column_int64(statement, 1), sqlite3_column_int64(statement, 2),
                             sqlite3_column_int64(statement, 3), sqlite3_column_int64(statement, 4), sqlite3_column_double(statement, 5),
                             sqlite3_column_double(statement, 6), sqlite3_column_double(statement, 7), text(8), text(9), text(10), text(11)))
            }
            sqlite3_finalize(statement)
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
            count += rows.count
        }
        return count
    }
}
