import GRDB

extension SearchIndex {
    /// `entities` and every sub-entity of each, as the stores' models (kept with their checkpoints) say:
    /// an entity filter means what a Core Data fetch of that entity means, sub-entities included.
    public func entitiesOfKind(_ entities: [String]) throws(SearchIndexError) -> [String] {
        guard !entities.isEmpty else { return [] }
        return try read { db in try Self.entitiesOfKind(entities, db: db) }
    }

    static func entitiesOfKind(_ entities: [String], db: Database) throws -> [String] {
        guard !entities.isEmpty else { return [] }
        return entitiesOfKind(entities, checkpoints: try fetchCheckpoints(db))
    }

    /// `entities` and every sub-entity of each, as these checkpoints' models say.
    package static func entitiesOfKind(_ entities: [String], checkpoints: [StoreCheckpoint]) -> [String] {
        var children: [String: Set<String>] = [:]
        for checkpoint in checkpoints {
            for (child, parent) in checkpoint.entityParents { children[parent, default: []].insert(child) }
        }
        var result = Set(entities)
        var frontier = entities
        while let next = frontier.popLast() {
            for child in children[next] ?? [] where result.insert(child).inserted { frontier.append(child) }
        }
        return result.sorted()
    }

    /// Every entity a request's entity filter may name: those with items, and their ancestors (abstract ones too).
    public func filterableEntityNames() throws(SearchIndexError) -> [String] {
        Self.filterableEntityNames(withItems: try entityNames(), checkpoints: try checkpoints())
    }

    /// The entities with items and their ancestors, as these checkpoints' models say.
    package static func filterableEntityNames(withItems entities: [String], checkpoints: [StoreCheckpoint]) -> [String] {
        var parents: [String: String] = [:]
        for checkpoint in checkpoints { parents.merge(checkpoint.entityParents) { first, _ in first } }
        var names = Set(entities)
        for name in names {
            var current = name
            var hops = 0
            while let parent = parents[current], hops < 256 { // a cycle in a damaged index cannot loop forever
                names.insert(parent)
                current = parent
                hops += 1
            }
        }
        return names.sorted()
    }
}
