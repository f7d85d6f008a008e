// Test helper: applies large, deterministic batches to an index until killed.
// Batch k upserts keys [k·n, (k+1)·n) and re-versions batch k−1's keys, deletes batch k−2's keys, and
// sets the checkpoint token to k; so after batch T the index holds exactly keys [(T−1)·n, (T+1)·n),
// all named "item <key> v<T>". Tests kill this process mid-batch and check that state.
import Foundation
import SearchIndex

let arguments = CommandLine.arguments
guard arguments.count == 5, let first = Int(arguments[2]), let count = Int(arguments[3]), let size = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: index-crash-helper <index> <first batch> <batch count> <items per batch>\n".utf8))
    exit(64)
}
do {
    let index = try SearchIndex(path: arguments[1], mode: .readWrite(permissions: nil))
    for batch in first..<(first + count) {
        let live = max(0, (batch - 1) * size)..<((batch + 1) * size)
        let upserts = live.map { key in
            IndexedItem(uri: String(format: "x-coredata://CRASH/Item/p%09d", key), entity: "Item", displayName: "item \(key) v\(batch)",
                        text: ["the quick brown fox \(key) jumps over the lazy dog, batch \(batch)"],
                        latitude: Double(key % 180) - 89.5, longitude: Double(key % 360) - 179.5)
        }
        let deletes = batch >= 2 ? ((batch - 2) * size..<((batch - 1) * size)).map { String(format: "x-coredata://CRASH/Item/p%09d", $0) } : []
        try index.apply(IndexBatch(upserts: upserts, deletes: deletes,
                                   checkpoint: StoreCheckpoint(storeUUID: "CRASH", storePath: "/crash", token: Int64(batch))))
        FileHandle.standardOutput.write(Data("committed \(batch)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("index-crash-helper: \(error)\n".utf8))
    exit(70)
}
