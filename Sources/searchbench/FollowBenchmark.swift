import ArgumentParser
import CoreDataStore
import CoreDataStoreWriter
import Foundation
import SeededRandom
import SearchIndex

/// Follow mode, measured: how soon a save is findable, and whether the indexer slows the app's commits.
struct FollowBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow",
        abstract: "Save-to-searchable latency of `searchctl index --follow`, and the app's commit latency with and without it.")

    @Option(help: "Places in the store.")
    var places = 20_000

    @Option(help: "Saves to measure.")
    var saves = 200

    @Option(help: "Saves per second.")
    var rate = 10.0

    @Option(help: "The searchctl binary (default: beside this one).")
    var searchctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("searchctl").path

    @Option(help: "Folder for the generated files.")
    var workdir = FileManager.default.temporaryDirectory.path

    func run() throws {
        let folder = URL(fileURLWithPath: workdir).appendingPathComponent("searchbench-follow-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Places.sqlite").path
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Place", attributes: [
                AttributeDescription(name: "name", type: .string, isIndexedBySpotlight: true),
                AttributeDescription(name: "latitude", type: .double), AttributeDescription(name: "longitude", type: .double),
            ]),
        ])
        let writer = try StoreWriter.create(at: store, model: model)
        var ids: [ManagedObjectID] = []
        var generator = SeededGenerator(state: 3)
        for first in stride(from: 0, to: places, by: 5_000) {
            var save = SaveRequest()
            for index in first..<min(first + 5_000, places) {
                save.insert("Place", attributes: ["name": .string("place \(index)"), "latitude": .double(Double.random(in: -80...80, using: &generator)),
                                                  "longitude": .double(Double.random(in: -180...180, using: &generator))])
            }
            ids += try writer.save(save).insertedObjectIDs
        }

        // Commit latency with no indexer running.
        let alone = try commits(writer: writer, ids: ids, tag: "alone", count: saves, rate: rate, generator: &generator, index: nil)

        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: searchctl)
        follower.arguments = ["index", "--store", store, "--follow", "--quiet"]
        follower.standardOutput = FileHandle.nullDevice
        try follower.run()
        defer { if follower.isRunning { kill(follower.processIdentifier, SIGTERM); follower.waitUntilExit() } }
        let indexPath = folder.appendingPathComponent("Places.searchindex").path
        var found: SearchIndex?
        while found == nil {
            usleep(50_000)
            if let candidate = try? SearchIndex(path: indexPath, mode: .readOnly),
               let hits = try? candidate.search(SearchRequest(query: "place", limit: 1)).hits, !hits.isEmpty {
                found = candidate
            }
        }
        guard let index = found else { return }
        // Let the first export settle before measuring.
        while let status = try index.checkpoints().first, status.exportState != nil { usleep(50_000) }
        let following = try commits(writer: writer, ids: ids, tag: "follow", count: saves, rate: rate, generator: &generator, index: index)

        let (visible50, visible99) = Self.percentiles(following.visibility)
        let (alone50, alone99) = Self.percentiles(alone.commits), (follow50, follow99) = Self.percentiles(following.commits)
        print("follow: \(places) places, \(saves) saves at \(rate)/s, searchctl index --follow in another process")
        print("machine: \(machineDescription())")
        print("")
        print("| measure | p50 (ms) | p99 (ms) |")
        print("|---|---:|---:|")
        print("| save → findable by searchctl search | \(Self.ms(visible50)) | \(Self.ms(visible99)) |")
        print("| app commit, no indexer | \(Self.ms(alone50)) | \(Self.ms(alone99)) |")
        print("| app commit, indexer following | \(Self.ms(follow50)) | \(Self.ms(follow99)) |")
    }

    /// Renames one place per save to a unique word; with an index, waits until the word is findable.
    func commits(writer: StoreWriter, ids: [ManagedObjectID], tag: String, count: Int, rate: Double,
                 generator: inout SeededGenerator, index: SearchIndex?) throws -> (commits: [Double], visibility: [Double]) {
        var commits: [Double] = [], visibility: [Double] = []
        for round in 0..<count {
            let started = DispatchTime.now().uptimeNanoseconds
            var save = SaveRequest()
            let word = "zq\(tag)\(round)x"
            save.update(.saved(ids[Int.random(in: 0..<ids.count, using: &generator)]), attributes: ["name": .string(word)])
            commits.append(try Clock.seconds { try writer.save(save) })
            if let index {
                let saved = DispatchTime.now().uptimeNanoseconds
                while try index.search(SearchRequest(query: word, limit: 1)).hits.isEmpty { usleep(2_000) }
                visibility.append(Double(DispatchTime.now().uptimeNanoseconds - saved) / 1e9)
            }
            let next = started + UInt64(1e9 / rate)
            let now = DispatchTime.now().uptimeNanoseconds
            if next > now { usleep(UInt32((next - now) / 1_000)) }
        }
        return (commits, visibility)
    }

    static func percentiles(_ values: [Double]) -> (Double, Double) { IndexBenchmark.percentiles(values) }
    static func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }
}
