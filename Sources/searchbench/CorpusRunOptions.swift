import ArgumentParser
import Foundation

/// What the benchmarks that run Searchlight's own executables on the Places Corpus share: where the
/// binaries, the Corpus and the generated files are, and writing the Corpus store with `appsim corpus`.
struct CorpusRunOptions: ParsableArguments {
    /// The help of each benchmark's `--corpus` option (its default differs by benchmark).
    static let sizeHelp = ArgumentHelp("The Corpus size appsim writes: small (34,006 places), full (234,908) or 1m (939,632).")

    @Flag(help: "Reuse the store an earlier run wrote in --workdir.")
    var reuse = false

    @Option(help: "The searchctl and appsim binaries' folder (default: this one's).")
    var binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path

    @Option(help: "The Corpus folder (places-config.json).")
    var corpusFolder = "Corpus"

    @Option(help: "Folder for the generated files.")
    var workdir = FileManager.default.temporaryDirectory.path

    /// The Corpus configuration's path, once the binaries and the configuration are known to exist.
    func configuration() throws -> String {
        for tool in ["appsim", "searchctl"] where !FileManager.default.isExecutableFile(atPath: binaries + "/" + tool) {
            throw BenchmarkError("no \(tool) in \(binaries): build it with swift build -c release --product \(tool), or give --binaries FOLDER")
        }
        let config = URL(fileURLWithPath: corpusFolder).appendingPathComponent("places-config.json").path
        guard FileManager.default.fileExists(atPath: config) else {
            throw BenchmarkError("no \(config): run from the repository's root, or give --corpus-folder FOLDER")
        }
        return config
    }

    /// A file under `workdir`.
    func file(_ name: String) -> String { URL(fileURLWithPath: workdir).appendingPathComponent(name).path }

    /// Writes the Corpus store of `size` at `store` with `appsim corpus`, unless `reuse` and it exists.
    func writeCorpus(size: String, to store: String) throws {
        guard !(reuse && FileManager.default.fileExists(atPath: store)) else { return }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        let written = try ChildProcess.run(binaries + "/appsim", ["corpus", "--size", size, "--out", store])
        guard written.status == 0 else { throw BenchmarkError("appsim corpus failed (exit \(written.status))") }
    }
}
