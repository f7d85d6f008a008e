import ArgumentParser
import Indexer
import SearchIndex

extension IndexReader {
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

    /// Warns on stderr that answers are partial while a store's first export (or an interrupted removal)
    /// is unfinished, with how far it is: a script must not take a half-built index's silence for
    /// "nothing there". A rebuild answers from the previous build meanwhile, and says so.
    func noteUnfinishedExports() {
        guard let unfinished = try? IndexStatus.unfinishedExports(index: self) else { return }
        for (storePath, export) in unfinished { printNote("\(storePath): \(export.sentence)") }
    }
}

extension ExportStatus {
    /// One sentence for `status` and search notes: what is unfinished, how far, and what it means for answers.
    var sentence: String {
        let progress = objectsExported.flatMap { done in objectCount.map { count in
            " (\(done.grouped) of \(count.grouped) objects, \(count > 0 ? min(100, done * 100 / count) : 100)%)"
        } } ?? ""
        switch kind {
        case .firstExport:
            return "first export in progress\(progress): results are incomplete until it ends"
        case .rebuild:
            return "rebuild in progress\(progress): results come from the previous build until it ends"
        case .removal:
            return "an interrupted rebuild removed part of the items: results are incomplete; run searchctl index for this store to finish it"
        }
    }
}
