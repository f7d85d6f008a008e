import ArgumentParser
import CoreDataStore
import CoreDataStoreWriter
import Foundation
import Indexer
import SearchIndex

/// Follow mode under a storm of saves: a country renamed (all its places re-indexed) and `appsim edit`
/// saving at a steady rate, with `searchctl index --follow` in another process.
///
/// "Findable" is exact, not sampled by searching: the index's checkpoint commits with each batch, so a save
/// whose transaction number is at or below the token the index holds is searchable, all of it, once no
/// walk of deferred dependents (a big rename's places, re-indexed a page at a time beside later saves) of
/// an object it changed began at or before it.
struct StormBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storm",
        abstract: "Follow mode under load: a big country renamed, then appsim edit at --rate saves/s; save → findable and lag.")

    @Option(help: CorpusRunOptions.sizeHelp)
    var corpus = "small"

    @Option(help: "Saves per second of appsim edit.")
    var rate = 200.0

    @Option(help: "Seconds of appsim edit.")
    var duration = 60.0

    @Option(help: "Quiet renames of the largest country before the storm, each timed.")
    var quietRenameCount = 5

    @Flag(help: "Follow with searchctl index --whole-batches: a big rename's places in its batch, not walked beside later saves.")
    var wholeBatches = false

    /// The store `--reuse` finds is the Corpus as written: every run edits a copy of it.
    @OptionGroup var files: CorpusRunOptions

    func run() throws {
        let folder = URL(fileURLWithPath: files.workdir)
        let seed = files.file("searchbench-storm-\(corpus).seed.sqlite")
        let store = files.file("searchbench-storm-\(corpus).sqlite")
        let index = files.file("searchbench-storm-\(corpus).searchindex")
        let log = files.file("searchbench-storm-\(corpus).jsonl")
        let config = try files.configuration()
        let binaries = files.binaries
        try files.writeCorpus(size: corpus, to: seed)
        ExportBenchmark.remove(store)
        ExportBenchmark.remove(index)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: seed + suffix) {
            try FileManager.default.copyItem(atPath: seed + suffix, toPath: store + suffix)
        }
        let objects = try ExportBenchmark.objectCount(store: store)
        let uuid = try PersistentStore(path: store).metadata.storeUUID
        let (largest, largestPlaces) = try Self.largestCountry(store: store)

        // The follower, as a person would start it; its catch-up lines go to a file.
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: binaries + "/searchctl")
        follower.arguments = ["index", "--store", store, "--config", config, "--index", index, "--follow"] + (wholeBatches ? ["--whole-batches"] : [])
        let followerOutput = folder.appendingPathComponent("searchbench-storm-\(corpus).follower.txt")
        _ = FileManager.default.createFile(atPath: followerOutput.path, contents: nil)
        follower.standardOutput = try FileHandle(forWritingTo: followerOutput)
        let started = Date()
        try follower.run()
        defer { if follower.isRunning { follower.terminate(); follower.waitUntilExit() } }
        let watcher = TokenWatcher(indexPath: index, storeUUID: uuid)
        let writer = try StoreWriter(path: store)
        let t0 = try PersistentStore(path: store).read { try $0.historyBounds().newest }
        guard let exported = watcher.wait(for: t0, exportFinished: true, timeout: 3_600, follower: follower) else {
            throw BenchmarkError("the follower's first export did not finish (exit \(follower.isRunning ? "–" : String(follower.terminationStatus)))")
        }
        let exportSeconds = exported.timeIntervalSince(started)

        // One save renames the country with the most places: every one of them shows its name. Seconds from
        // the save until all of them are findable.
        func rename(to name: String) throws -> Double {
            var save = SaveRequest()
            save.update(.saved(largest), attributes: ["name": .string(name)])
            let started = Date()
            guard let transaction = try writer.save(save).transactionNumber,
                  let done = watcher.wait(for: transaction, timeout: 600, follower: follower) else {
                throw BenchmarkError("the follower did not index the renamed country")
            }
            return done.timeIntervalSince(started)
        }
        let renameSeconds = try rename(to: "Stormland")
        // The same rename again, quiet, a few times: what a big rename costs without a storm around it.
        var quietRenames: [Double] = []
        for round in 0..<quietRenameCount {
            usleep(300_000)
            quietRenames.append(try rename(to: "Stormland \(round)"))
        }

        // The storm: appsim edit in its own process, the index's token watched beside it.
        let edit = Process()
        edit.executableURL = URL(fileURLWithPath: binaries + "/appsim")
        edit.arguments = ["edit", "--store", store, "--rate", String(rate), "--duration", String(duration), "--seed", "7", "--log", log]
        edit.standardOutput = FileHandle.nullDevice
        try edit.run()
        var samples: [TokenWatcher.Sample] = []
        while edit.isRunning {
            samples.append(watcher.sample())
            usleep(5_000)
        }
        guard edit.terminationStatus == 0 else { throw BenchmarkError("appsim edit failed (exit \(edit.terminationStatus))") }
        let saves = try Self.saves(log: log)
        guard let last = saves.last else { throw BenchmarkError("appsim edit logged no saves") }
        while samples.last.map({ $0.token < last.transaction || !$0.walks.isEmpty }) ?? true, Date().timeIntervalSince1970 - last.committed < 120, follower.isRunning {
            samples.append(watcher.sample())
            usleep(5_000)
        }
        let caughtUp = samples.first { $0.token >= last.transaction && $0.walks.isEmpty }
        // Each save's latency: from its commit to the first sample that covers it, all of it. Walks only
        // hold back the saves that changed their object: the token alone is monotonic, the walks are not.
        var latencies: [Double] = [], next = 0
        var maxBacklog = 0, walked = 0
        for save in saves {
            while next < samples.count && samples[next].token < save.transaction { next += 1 }
            var covering = next
            while covering < samples.count && !samples[covering].covers(save) { covering += 1 }
            if covering > next { walked += 1 }
            latencies.append(covering < samples.count ? samples[covering].time - save.committed : .infinity)
        }
        for sample in samples {
            maxBacklog = max(maxBacklog, saves.count { $0.committed <= sample.time && !sample.covers($0) })
        }
        let largestWalks = samples.map(\.walks.count).max() ?? 0
        let (p50, p99) = IndexBenchmark.percentiles(latencies)
        follower.terminate()
        follower.waitUntilExit()
        // Checked against an independent computation: a fresh export of the store as the storm left it.
        let followed = Set(try SearchIndex(path: index, mode: .readOnly).dump())
        let fresh = files.file("searchbench-storm-\(corpus).fresh.searchindex")
        ExportBenchmark.remove(fresh)
        defer { ExportBenchmark.remove(fresh) }
        let exportedFresh = try ChildProcess.run(binaries + "/searchctl", ["index", "--store", store, "--config", config, "--index", fresh, "--quiet"])
        guard exportedFresh.status == 0 else { throw BenchmarkError("searchctl index of a fresh index failed (exit \(exportedFresh.status))") }
        let equal = followed == Set(try SearchIndex(path: fresh, mode: .readOnly).dump())

        // A backlog: 2,000 saves while no follower runs, then one catch-up, then a rebuild for comparison.
        let backlog = try ChildProcess.run(binaries + "/appsim", ["edit", "--store", store, "--rate", "1000", "--duration", "2", "--seed", "8"])
        guard backlog.status == 0 else { throw BenchmarkError("appsim edit failed (exit \(backlog.status))") }
        let notes = folder.appendingPathComponent("searchbench-storm-\(corpus).notes.txt").path
        let catchUp = try ChildProcess.run("/bin/sh", ["-c", "exec \"$0\" index --store \"$1\" --index \"$2\" --quiet 2> \"$3\"",
                                                       binaries + "/searchctl", store, index, notes])
        let switched = (try? String(contentsOfFile: notes, encoding: .utf8))?.contains("rebuilding") == true
        let rebuild = try ChildProcess.run(binaries + "/searchctl", ["index", "--store", store, "--index", index, "--rebuild", "--quiet"])
        guard catchUp.status == 0, rebuild.status == 0 else { throw BenchmarkError("searchctl index failed after the backlog") }
        let catchUps = (try? String(contentsOf: followerOutput, encoding: .utf8))?.split(separator: "\n").count ?? 0

        print("storm: the \(corpus) Corpus (\(objects) objects), searchctl index --follow\(wholeBatches ? " --whole-batches" : "") in another process")
        print("machine: \(machineDescription())")
        print("")
        print("| measure | value |")
        print("|---|---:|")
        print("| first export (spawn → token T0 committed), items/s | \(Int((Double(objects) / exportSeconds).rounded())) |")
        print("| largest country renamed: its \(largestPlaces) places findable after, s | \(String(format: "%.2f", renameSeconds)) |")
        print("| … re-indexed items/s (÷ first export's) | \(Int((Double(largestPlaces) / renameSeconds).rounded())) (\(String(format: "%.2f", exportSeconds * Double(largestPlaces) / renameSeconds / Double(objects)))×) |")
        if !quietRenames.isEmpty {
            let sorted = quietRenames.sorted()
            print("| the same rename again, quiet (\(sorted.count)×): fastest / median, ms | \(Self.ms(sorted[0])) / \(Self.ms(sorted[sorted.count / 2])) |")
        }
        print("| appsim edit: saves, at rate/s | \(saves.count) at \(Int(rate)) |")
        print("| save → findable p50 / p99 / max, ms | \(Self.ms(p50)) / \(Self.ms(p99)) / \(Self.ms(latencies.max() ?? 0)) |")
        print("| largest backlog, saves | \(maxBacklog) |")
        print("| saves findable only after a walk of their object's dependents; most walks at once | \(walked); \(largestWalks) |")
        print("| last save → lag 0, ms | \(caughtUp.map { Self.ms($0.time - last.committed) } ?? "not within 120 s") |")
        print("| follower catch-ups (lines) | \(catchUps) |")
        print("| the followed index equals a fresh export of the store | \(equal ? "yes" : "NO"), \(followed.count) items |")
        print("| 2,000 saves unfollowed, then searchctl index: s (switched to a rebuild?) | \(String(format: "%.2f", catchUp.seconds)) (\(switched ? "yes" : "no")) |")
        print("| searchctl index --rebuild of the same store: s | \(String(format: "%.2f", rebuild.seconds)) |")
    }

    /// The country with the most places, and how many.
    static func largestCountry(store: String) throws -> (ManagedObjectID, Int) {
        let counts = try PersistentStore(path: store).read { snapshot in
            try snapshot.objects(ofEntity: "Place", limit: Int.max, relationships: .toOneOnly).reduce(into: [ManagedObjectID: Int]()) { counts, place in
                if let country = place.toOne["country"] ?? nil { counts[country, default: 0] += 1 }
            }
        }
        guard let largest = counts.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key.primaryKey > $1.key.primaryKey) }) else {
            throw BenchmarkError("\(store) has no places with a country")
        }
        return (largest.key, largest.value)
    }

    /// One save appsim edit logged: its transaction, commit time and the objects it changed.
    struct Save {
        var transaction: Int64
        var committed: Double
        var objects: Set<String>
    }

    /// The saves appsim edit logged.
    static func saves(log: String) throws -> [Save] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let transaction = (object["transaction"] as? NSNumber)?.int64Value,
                  let committed = (object["committed"] as? NSNumber)?.doubleValue else { return nil }
            let objects = ["inserted", "updated", "deleted"].flatMap { object[$0] as? [String] ?? [] }
            return Save(transaction: transaction, committed: committed, objects: Set(objects))
        }
    }

    static func ms(_ seconds: Double) -> String { seconds.isFinite ? String(format: "%.1f", seconds * 1000) : "∞" }
}

/// Reads the token an index holds for one store, from another process's point of view.
final class TokenWatcher {
    let indexPath: String
    let storeUUID: String
    /// Opened once the file exists; every read is a new read transaction, so it sees each commit.
    private var index: SearchIndex?

    init(indexPath: String, storeUUID: String) {
        self.indexPath = indexPath
        self.storeUUID = storeUUID
    }

    /// What the index had committed at one moment: the token, and the walks of deferred dependents then
    /// under way (by related object, their origin).
    struct Sample {
        var time: Double
        var token: Int64
        var walks: [String: Int64]

        /// Whether everything `save` changed was findable then.
        func covers(_ save: StormBenchmark.Save) -> Bool {
            token >= save.transaction && !walks.contains { save.objects.contains($0.key) && $0.value <= save.transaction }
        }
    }

    /// The token, then the walks, then the time: what was findable by then (a walk read after its token
    /// can only have moved on since).
    func sample() -> Sample {
        let token = self.token()
        // Walks that could not be read: nothing is taken as findable then.
        guard let walks = try? index?.deferredDependents(storeUUID: storeUUID) else { return Sample(time: Date().timeIntervalSince1970, token: 0, walks: [:]) }
        // A walk whose progress does not read is taken as begun before every save.
        return Sample(time: Date().timeIntervalSince1970, token: token, walks: walks.mapValues { DeferredDependents(text: $0)?.origin ?? 0 })
    }

    /// The token the index has committed for the store (0 before it has one); with `exportFinished`, 0
    /// while a first export is still running.
    func token(exportFinished: Bool = false) -> Int64 {
        if index == nil { index = try? SearchIndex(path: indexPath, mode: .readOnly) }
        // Opened before the follower created the index, the handle reads an empty file: open it again.
        guard let checkpoint = try? index?.checkpoint(storeUUID: storeUUID) else {
            index = nil
            return 0
        }
        return exportFinished && checkpoint.exportState != nil ? 0 : max(checkpoint.token, exportFinished ? 1 : 0)
    }

    /// Polls until the token reaches `token` and no walk begun at or before it is left; the time it did, or
    /// nil after `timeout` or when the follower exits.
    func wait(for token: Int64, exportFinished: Bool = false, timeout: Double, follower: Process) -> Date? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline && follower.isRunning {
            // Every walk begun at or before the token done too (a rename's places).
            if self.token(exportFinished: exportFinished) >= max(token, 1),
               let walks = try? index?.deferredDependents(storeUUID: storeUUID),
               !walks.values.contains(where: { DeferredDependents(text: $0).map { $0.origin <= token } ?? true }) {
                return Date()
            }
            usleep(5_000)
        }
        return nil
    }
}
