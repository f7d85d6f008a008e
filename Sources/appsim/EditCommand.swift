import ArgumentParser
import CoreDataStore
import CoreDataStoreWriter
import Foundation
import SeededRandom

/// `appsim edit`: random saves at a steady rate, like a busy app.
struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Make random inserts, renames, moves, re-parentings and deletes, one save each, at a steady rate.",
        discussion: """
            Every save is one transaction with history. --log writes one JSON object per save with what it changed \
            and when it was committed (seconds since 1970), for tests and benchmarks to check a follower against.

            Example:
              appsim edit --store /tmp/places.sqlite --rate 200 --duration 60 --seed 7 --log /tmp/edits.jsonl
            """)

    @Option(help: "The store to edit (written by appsim corpus).")
    var store: String

    @Option(help: "Saves per second.")
    var rate: Double = 10

    @Option(help: "Seconds to run.")
    var duration: Double = 10

    @Option(help: "Random seed, for reproducible runs.")
    var seed: UInt64 = 1

    @Option(help: "Write a JSON line per save to this file.")
    var log: String?

    func validate() throws {
        guard rate > 0, rate <= 100_000 else { throw ValidationError("--rate must be between 0 and 100000 saves per second") }
        guard duration > 0 else { throw ValidationError("--duration must be positive") }
    }

    enum Operation: String, CaseIterable {
        case insert, rename, move, reparent, delete, renameCountry = "rename-country"
    }

    func run() throws {
        do {
            let writer = try StoreWriter(path: store)
            let reader = try PersistentStore(path: store)
            var places = try reader.read { try $0.objects(ofEntity: "Place", limit: Int.max, relationships: .toOneOnly) }
                .map { ($0.objectID, $0.attributes["name"]?.stringValue ?? "Place", $0.attributes["latitude"]?.doubleValue ?? 0, $0.attributes["longitude"]?.doubleValue ?? 0) }
            let countries = try reader.read { try $0.objects(ofEntity: "Country", limit: Int.max, relationships: .toOneOnly) }.map(\.objectID)
            guard !countries.isEmpty else { throw AppSimError.missingData("\(store) has no countries; build it with appsim corpus") }
            var generator = SeededGenerator(state: seed)
            let logHandle: FileHandle? = try log.map { path in
                _ = FileManager.default.createFile(atPath: path, contents: nil)
                guard let handle = FileHandle(forWritingAtPath: path) else { throw AppSimError.missingData("cannot write \(path)") }
                return handle
            }
            var counts: [Operation: Int] = [:]
            var latencies: [Double] = []
            let start = DispatchTime.now().uptimeNanoseconds
            let total = Int(rate * duration)
            for index in 0..<total {
                // Keep the pace: sleep until this save's slot, never try to catch up in a burst.
                let slot = start + UInt64(Double(index) / rate * 1e9)
                let now = DispatchTime.now().uptimeNanoseconds
                if slot > now { usleep(UInt32((slot - now) / 1_000)) }
                var operation = Operation.allCases.randomElement(using: &generator) ?? .insert
                if places.isEmpty { operation = .insert }
                var save = SaveRequest(author: "appsim", contextName: "editor", bundleID: "org.searchlight.appsim", processID: "appsim")
                var target: Int?
                switch operation {
                case .insert:
                    let model = places.randomElement(using: &generator) ?? (objectID: countries[0], name: "Place", latitude: 0, longitude: 0)
                    save.insert("Place", attributes: [
                        "name": .string("New \(model.1) \(index)"), "asciiName": .string("New \(model.1) \(index)"),
                        "latitude": .double(min(90, max(-90, model.2 + Double.random(in: -0.1...0.1, using: &generator)))),
                        "longitude": .double(min(180, max(-180, model.3 + Double.random(in: -0.1...0.1, using: &generator)))),
                        "population": .integer(Int64.random(in: 0...50_000, using: &generator)), "updatedAt": .date(Date()),
                    ], relationships: ["country": .toOne(.saved(countries[Int.random(in: 0..<countries.count, using: &generator)]))])
                case .rename:
                    target = Int.random(in: 0..<places.count, using: &generator)
                    save.update(.saved(places[target!].0), attributes: ["name": .string("Renamed \(places[target!].1) \(index)"), "updatedAt": .date(Date())])
                case .move:
                    target = Int.random(in: 0..<places.count, using: &generator)
                    save.update(.saved(places[target!].0), attributes: [
                        "latitude": .double(min(90, max(-90, places[target!].2 + Double.random(in: -0.01...0.01, using: &generator)))),
                        "longitude": .double(min(180, max(-180, places[target!].3 + Double.random(in: -0.01...0.01, using: &generator)))),
                        "updatedAt": .date(Date()),
                    ])
                case .reparent:
                    target = Int.random(in: 0..<places.count, using: &generator)
                    save.update(.saved(places[target!].0), relationships: ["country": .toOne(.saved(countries[Int.random(in: 0..<countries.count, using: &generator)]))])
                case .delete:
                    target = Int.random(in: 0..<places.count, using: &generator)
                    save.delete(places[target!].0)
                case .renameCountry:
                    let country = countries[Int.random(in: 0..<countries.count, using: &generator)]
                    save.update(.saved(country), attributes: ["name": .string("Country \(index)")])
                }
                let began = DispatchTime.now().uptimeNanoseconds
                let result = try writer.save(save)
                latencies.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
                // Wall-clock time the save was committed, for a follower in another process to measure against.
                let committed = Date().timeIntervalSince1970
                counts[operation, default: 0] += 1
                if operation == .delete, let target { places.swapAt(target, places.count - 1); places.removeLast() }
                for id in result.insertedObjectIDs { places.append((id, "New place", 0, 0)) }
                if let logHandle {
                    let line = "{\"save\":\(index),\"committed\":\(String(format: "%.6f", committed)),\"transaction\":\(result.transactionNumber.map(String.init) ?? "null"),\"operation\":\"\(operation.rawValue)\","
                        + "\"inserted\":\(Self.json(result.insertedObjectIDs)),\"updated\":\(Self.json(result.updatedObjectIDs)),\"deleted\":\(Self.json(result.deletedObjectIDs))}\n"
                    logHandle.write(Data(line.utf8))
                }
            }
            try logHandle?.close()
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            latencies.sort()
            let p50 = latencies.isEmpty ? 0 : latencies[latencies.count / 2]
            let p99 = latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
            let summary = Operation.allCases.map { "\(counts[$0, default: 0]) \($0.rawValue)" }.joined(separator: ", ")
            print(String(format: "appsim edit: %d saves in %.1f s (%.1f/s): ", total, seconds, Double(total) / seconds) + summary
                + String(format: "; commit p50 %.2f ms, p99 %.2f ms", p50, p99))
        } catch {
            throw ExitCode(fail(error).code)
        }
    }

    private static func json(_ ids: [ManagedObjectID]) -> String {
        "[" + ids.map { "\"\($0.uriRepresentation)\"" }.joined(separator: ",") + "]"
    }
}
