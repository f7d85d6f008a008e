import Foundation
@testable import SearchIndex
import Testing
import SeededRandom
import TestScratch

@Suite("Crash atomicity, for real", .ownThread)
struct CrashTests {
    static let helper: URL = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("index-crash-helper")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/index-crash-helper")
    }()

    static let batchSize = 1_000

    /// The exact contents after batch `token` (see the helper's header).
    static func expected(after token: Int64) -> [String: String] {
        guard token > 0 else { return [:] }
        let live = max(0, (Int(token) - 1) * batchSize)..<((Int(token) + 1) * batchSize)
        return Dictionary(uniqueKeysWithValues: live.map { (String(format: "x-coredata://CRASH/Item/p%09d", $0), "item \($0) v\(token)") })
    }

    /// Reads a child's standard output line by line, blocking, as the lines come.
    struct LineReader {
        let handle: FileHandle
        private var buffer = Data()
        init(_ handle: FileHandle) { self.handle = handle }

        /// The next line, or nil once the writer is gone.
        mutating func next() -> String? {
            while true {
                if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self)
                    buffer = Data(buffer[buffer.index(after: end)...])
                    return line
                }
                let chunk = handle.availableData
                if chunk.isEmpty { return nil }
                buffer.append(chunk)
            }
        }
    }

    // Kills are timed by the helper's own "committed" lines, not by the clock: on a loaded machine (the whole
    // suite runs beside this test) a helper can take seconds to commit its first batch, and kills timed by the
    // clock then all land before any commit, testing no resumed run (CI once saw 2 of 50 rounds progress).
    @Test("SIGKILL in the middle of large batches, 50 times: the index always opens at exactly the last checkpoint")
    func killMidBatch() throws {
        let path = Scratch.folder.appendingPathComponent("crash-\(UUID().uuidString).searchindex").path
        var generator = SeededGenerator(state: 1234)
        var token: Int64 = 0
        var progressed = 0, waitedForCommits = 0
        for round in 0..<50 {
            let output = Pipe()
            let process = Process()
            process.executableURL = Self.helper
            process.arguments = [path, String(token + 1), "1000", String(Self.batchSize)]
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            let launched = ContinuousClock.now
            try process.run()
            // One round in five kills while the index is opened or the first batch written; the others after
            // one or two commits, at a random point of the next batch (its length guessed from the last one's).
            let commits = round % 5 == 0 ? 0 : Int.random(in: 1...2, using: &generator)
            var lines = LineReader(output.fileHandleForReading)
            var lastCommit = launched, batchLength = Duration.milliseconds(300)
            for _ in 0..<commits {
                guard lines.next() != nil else { break }
                let now = ContinuousClock.now
                batchLength = now - lastCommit
                lastCommit = now
            }
            if commits > 0 { waitedForCommits += 1 }
            let fraction = Double.random(in: 0.05..<0.95, using: &generator)
            usleep(UInt32(min(2_000_000, max(1_000, (batchLength * fraction) / .microseconds(1)))))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? output.fileHandleForReading.close()
            #expect(process.terminationReason == .uncaughtSignal, "round \(round): the helper ended on its own")

            let index = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
            let now = try index.checkpoint(storeUUID: "CRASH")?.token ?? 0
            #expect(now >= token, "round \(round): the checkpoint went backwards")
            if commits > 0 { #expect(now > token, "round \(round): the helper said it committed, yet the checkpoint did not move") }
            if now > token { progressed += 1 }
            token = now
            let items = try index.dump()
            let actual = Dictionary(items.map { ($0.uri, $0.displayName) }, uniquingKeysWith: { first, _ in first })
            #expect(items.count == actual.count, "round \(round): duplicate items")
            #expect(actual == Self.expected(after: token), "round \(round): index differs from checkpoint \(token)")
            // The FTS and R-tree tables agree with the items.
            #expect(try index.count(SearchRequest(query: "fox")) == actual.count)
            #expect(try index.count(SearchRequest(near: try Coordinate(latitude: 0, longitude: 0), radius: GeoMath.maximumDistance)) == actual.count)
        }
        #expect(waitedForCommits == 40)
        #expect(progressed >= waitedForCommits, "only \(progressed) kills landed after a commit")
    }
}

@Suite("Readers beside a writer", .ownThread)
struct ConcurrencyTests {
    @Test("searches and status in other connections always see whole batches while a writer commits")
    func readersBesideWriter() throws {
        let path = Scratch.folder.appendingPathComponent("concurrent-\(UUID().uuidString).searchindex").path
        let writer = try SearchIndex(path: path, mode: .readWrite(permissions: nil))
        let batches = 200, size = 300
        // Blocking database work runs on its own threads, as separate reader processes would.
        let group = DispatchGroup()
        let failures = Failures()
        // The writer starts once both readers have read once: on a loaded machine it could otherwise write
        // all its batches before a reader looks, and the readers would see one state.
        let readersStarted = DispatchSemaphore(value: 0)
        DispatchQueue(label: "writer").async(group: group) {
            do {
                readersStarted.wait()
                readersStarted.wait()
                for batch in 1...batches {
                    let items = (0..<size).map { IndexedItem(uri: "x-coredata://C/Item/p\(batch * size + $0)", entity: "Item", displayName: "fox \(batch)") }
                    try writer.apply(IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "C", storePath: "/c", token: Int64(batch))))
                }
            } catch { failures.record("writer: \(error)") }
        }
        for number in 0..<2 {
            DispatchQueue(label: "reader \(number)").async(group: group) {
                do {
                    let reader = try SearchIndex(path: path, mode: .readOnly)
                    var observations = 0, seenTokens: Set<Int64> = []
                    while true {
                        let statistics = try reader.statistics()
                        let token = statistics.checkpoints.first?.token ?? 0
                        if statistics.itemsPerEntity["Item", default: 0] != Int(token) * size {
                            failures.record("reader \(number) saw \(statistics.itemsPerEntity) at token \(token)")
                        }
                        if observations == 0 { readersStarted.signal() }
                        observations += 1
                        seenTokens.insert(token)
                        if token == Int64(batches) { break }
                    }
                    if seenTokens.count < 3 { failures.record("reader \(number) saw only \(seenTokens.count) states in \(observations) reads") }
                } catch {
                    failures.record("reader \(number): \(error)")
                    readersStarted.signal()
                }
            }
        }
        group.wait()
        #expect(failures.messages.isEmpty, "\(failures.messages)")
    }
}

/// Collects failures from several threads.
final class Failures: @unchecked Sendable {
    // Safe: every access to `list` holds `lock`.
    private let lock = NSLock()
    private var list: [String] = []
    func record(_ message: String) { lock.withLock { list.append(message) } }
    var messages: [String] { lock.withLock { list } }
}
