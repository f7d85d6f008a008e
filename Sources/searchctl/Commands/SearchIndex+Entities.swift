import ArgumentParser
import SearchIndex

extension SearchIndex {
    /// After an empty answer: an `--entity` the index holds no items of is a mistake worth naming
    /// (checked only then, so a normal search never pays for the scan).
    func checkEntities(_ entities: [String]) throws {
        guard !entities.isEmpty else { return }
        let known = try filterableEntityNames()
        let unknown = entities.filter { !known.contains($0) }
        guard !unknown.isEmpty else { return }
        let names = unknown.map { "'\($0)'" }.joined(separator: ", ")
        throw ValidationError(known.isEmpty
            ? "the index holds no items yet (entity \(names)); build it with: searchctl index --store <store.sqlite>"
            : "the index holds no items of entity \(names); it holds \(known.joined(separator: ", "))")
    }

    /// Warns on stderr that answers are partial while a store's first export or rebuild is still running:
    /// a script must not take a half-built index's silence for "nothing there".
    func noteIncompleteExports() {
        guard let checkpoints = try? checkpoints() else { return }
        for checkpoint in checkpoints where checkpoint.exportState != nil {
            let what = checkpoint.exportState == StoreCheckpoint.removalInProgress ? "a rebuild" : "the first export"
            printNote("\(what) of \(checkpoint.storePath) is still running: results are incomplete; searchctl status shows how far it is")
        }
    }
}
