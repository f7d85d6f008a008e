import Foundation
import SearchIndex

/// The index and baseline files one benchmark run writes beside each other, and how it fills the index.
struct BenchmarkFiles {
    /// The path both files share, without suffix.
    let base: String

    /// Files named after the benchmark and this process under `workdir`; `shared` names them after the
    /// benchmark alone, so that a later run can reuse them.
    init(workdir: String, label: String, shared: Bool = false) {
        let name = shared ? "searchbench-\(label)" : "searchbench-\(label)-\(getpid())"
        base = URL(fileURLWithPath: workdir).appendingPathComponent(name).path
    }

    /// Whether both files exist (written by an earlier run with `shared` names).
    var exist: Bool {
        FileManager.default.fileExists(atPath: index) && FileManager.default.fileExists(atPath: baseline)
    }

    var index: String { base + ".searchindex" }
    var baseline: String { base + ".baseline" }

    /// Removes both files and their companions.
    func remove() {
        for suffix in [".searchindex", ".searchindex-wal", ".searchindex-shm", ".baseline", ".baseline-wal", ".baseline-shm"] {
            try? FileManager.default.removeItem(atPath: base + suffix)
        }
    }

    /// Writes the places into a new index in batches of 5,000, as a first export does, and merges the
    /// full-text segments at the end; returns the seconds that took.
    func writeIndex(_ places: [GeoNamesPlace], item: (GeoNamesPlace, Int) -> IndexedItem) throws -> Double {
        let index = try SearchIndex(path: self.index, mode: .readWrite(permissions: nil))
        var seconds = 0.0
        for start in stride(from: 0, to: places.count, by: 5_000) {
            let items = (start..<min(start + 5_000, places.count)).map { item(places[$0], $0) }
            // Unfinished until the last batch, as an export's checkpoints are.
            let last = start + 5_000 >= places.count
            let batch = IndexBatch(upserts: items, checkpoint: StoreCheckpoint(storeUUID: "BENCH", storePath: "/bench", token: Int64(start),
                                                                              exportState: last ? nil : "first export"))
            seconds += try Clock.seconds { try index.apply(batch) }
        }
        return seconds + (try Clock.seconds { try index.optimize() })
    }
}
