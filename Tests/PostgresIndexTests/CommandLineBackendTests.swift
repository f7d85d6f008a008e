#if PostgreSQL
import Foundation
import Testing
import TestScratch

/// `searchctl` with `--index postgres://…` (or `SEARCHCTL_INDEX`) as a person uses it: a store indexed into
/// PostgreSQL and into an SQLite file prints the same searches, dump and resolved objects.
@Suite("searchctl on PostgreSQL", .serialized, .ownThread)
struct CommandLineBackendTests {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a built tool (beside `searchctl`) to the end.
    static func run(_ arguments: [String], tool: String = "searchctl", environment: [String: String] = [:]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ExporterCrashTests.searchctl).deletingLastPathComponent().appendingPathComponent(tool)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    @Test("index, search, dump, resolve, status and explain: the same answers from postgres:// as from the SQLite file",
          .enabled(if: PostgresCluster.unavailability == nil || PostgresCluster.required, "PostgreSQL is not installed"))
    func sameOutput() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let url = cluster.url()
        let folder = Scratch.folder.appendingPathComponent("pg-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = folder.appendingPathComponent("Places.sqlite").path
        let file = folder.appendingPathComponent("Places.searchindex").path
        let config = ExporterCrashTests.projectRoot.appendingPathComponent("Corpus/places-config.json").path
        let corpus = ExporterCrashTests.projectRoot.appendingPathComponent("Corpus").path
        // A twentieth of the Corpus: 1,700 places in every country.
        let written = try Self.run(["corpus", "--size", "small", "--part", "0/20", "--out", store, "--corpus", corpus], tool: "appsim")
        #expect(written.status == 0, "\(written.stderr)")
        for index in [url, file] {
            let indexed = try Self.run(["index", "--store", store, "--config", config, "--index", index])
            #expect(indexed.status == 0, "\(indexed.stderr)")
            #expect(indexed.stdout.contains(" inserted, 0 updated, 0 deleted"), "\(indexed.stdout)")
        }
        let searches: [[String]] = [
            ["search", "san", "--exact", "--format", "json"],
            ["search", "new york", "--exact", "--format", "table"],
            ["search", "saint*", "--exact", "--limit", "7"],
            ["search", "--near", "-33.87,151.21", "--radius", "200km", "--format", "jsonl"],
            ["search", "--near", "35.68,139.69", "--limit", "5", "--format", "json"],
            ["search", "--bbox", "45,5,48,11", "--format", "json", "--limit", "50"],
            ["search", "--entity", "Country", "--exact", "united", "--format", "json"],
            ["dump", "--entity", "Country"],
            // Typo tolerance (with a suggestion when nothing matches), filters, orders, facets, saved searches.
            ["search", "saintt", "--format", "json", "--limit", "30"],
            ["search", "sann", "--prefix-last", "--format", "json"],
            ["search", "zzxqvbnm", "--format", "json"],
            ["search", "--where", "population > 100000 AND country IN {'JP', 'FR'}", "--sort", "population:desc", "--format", "json"],
            ["search", "--where", "country ==[c] 'jp' OR timeZone ENDSWITH 'Paris'", "--format", "json", "--limit", "40"],
            ["search", "san", "--facet", "country", "--sort", "country", "--format", "json"],
            ["search", "--near", "48.85,2.35", "--radius", "300km", "--where", "population >= 5000", "--facet", "timeZone", "--format", "json"],
            ["search", "--saved", "citiesOf", "--var", "CODE=JP", "--var", "MIN=50000", "--format", "json"],
            ["search", "--where", "nosuch > 1"],
        ]
        for arguments in searches {
            let postgres = try Self.run(arguments + ["--index", url])
            let sqlite = try Self.run(arguments + ["--index", file])
            #expect(postgres.status == sqlite.status, "\(arguments): \(postgres.stderr)")
            #expect(postgres.stdout == sqlite.stdout, "\(arguments)")
            #expect(postgres.stderr == sqlite.stderr, "\(arguments)")
            #expect(!postgres.stdout.isEmpty || sqlite.status != 0, "\(arguments)")
        }
        // SEARCHCTL_INDEX names it too; hits resolve to their objects through the checkpoints it holds.
        let hits = try Self.run(["search", "san", "--exact", "--limit", "3"], environment: ["SEARCHCTL_INDEX": url])
        #expect(hits.status == 0, "\(hits.stderr)")
        let uris = hits.stdout.split(separator: "\n").map(String.init)
        #expect(uris.count == 3)
        let resolved = try Self.run(["resolve", "--format", "jsonl"] + uris, environment: ["SEARCHCTL_INDEX": url])
        let local = try Self.run(["resolve", "--format", "jsonl", "--index", file] + uris)
        #expect(resolved.status == 0 && resolved.stdout == local.stdout, "\(resolved.stderr)")
        // Status: the store's token, as the SQLite index has it; the index named by its URL, no password.
        let status = try Self.run(["status", "--format", "json", "--index", url])
        let localStatus = try Self.run(["status", "--format", "json", "--index", file])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let parsedLocal = try #require(try JSONSerialization.jsonObject(with: Data(localStatus.stdout.utf8)) as? [String: Any])
        #expect(parsed["index"] as? String == url)
        #expect(parsed["items"] as? NSDictionary == parsedLocal["items"] as? NSDictionary)
        let stores = try #require(parsed["stores"] as? [[String: Any]])
        let localStores = try #require(parsedLocal["stores"] as? [[String: Any]])
        #expect(stores.first?["token"] as? Int == localStores.first?["token"] as? Int)
        #expect(stores.first?["lag"] as? Int == 0)
        // explain shows PostgreSQL's plans (on so few rows it may scan rather than use the GIN index).
        let explained = try Self.run(["explain", "tokyo", "--exact", "--index", url])
        #expect(explained.status == 0 && explained.stdout.contains("Scan on searchlight_items"), "\(explained.stdout)\(explained.stderr)")
        // What PostgreSQL does not answer yet is refused, with what to do instead, as a usage error.
        let snippets = try Self.run(["search", "tokyo", "--snippets", "--index", url])
        #expect(snippets.status == 64 && snippets.stderr.contains("does not support snippets yet"), "\(snippets.stderr)")
        // A second exporter of the same store while one follows it: refused by the database, exit 75.
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: ExporterCrashTests.searchctl)
        follower.arguments = ["index", "--store", store, "--index", url, "--follow", "--quiet"]
        follower.standardOutput = FileHandle.nullDevice
        follower.standardError = FileHandle.nullDevice
        try follower.run()
        defer { if follower.isRunning { kill(follower.processIdentifier, SIGKILL) } }
        var second = Output(status: 0, stdout: "", stderr: "")
        for _ in 0..<50 {
            usleep(100_000)
            second = try Self.run(["index", "--store", store, "--index", url, "--quiet"])
            if second.status != 0 { break }
        }
        #expect(second.status == 75 && second.stderr.contains("another exporter is writing store"), "\(second.stderr)")
        kill(follower.processIdentifier, SIGTERM)
        follower.waitUntilExit()
        #expect(follower.terminationStatus == 0)
    }
}
#endif
