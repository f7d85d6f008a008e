import CoreDataStore

/// The stage after coalescing: the indexed objects whose items show a changed object through a relationship
/// (a renamed country's places), found by walking the configuration's key paths backwards through their
/// inverses in the batch's store snapshot.
struct DependentExpansion: Sendable {
    let configuration: ResolvedConfiguration
    /// Which entities' objects are shown by which indexed entities, through which inverses.
    let digests: ShownValueDigests

    /// Indexed objects whose items show one of `objects`, which were read with their first inverses
    /// (``ShownValueDigests/withFirstInverses(_:in:)``): the first step back is taken from them, the rest from
    /// the store.
    func dependents(of objects: [ManagedObjectSnapshot], in snapshot: StoreSnapshot) throws -> Set<ManagedObjectID> {
        var result: Set<ManagedObjectID> = []
        let model = configuration.model
        for (entity, group) in Dictionary(grouping: objects, by: \.entityName) {
            for dependency in digests.entries(for: entity) {
                guard let first = dependency.inverses.first else { continue }
                var current = group.flatMap { $0.toOne[first].map { [$0] } ?? $0.toMany[first] ?? [] }
                for inverse in dependency.inverses.dropFirst() where !current.isEmpty {
                    let objects = try snapshot.objects(current, relationships: .toOneAnd([inverse]))
                    current = objects.values.flatMap { $0.toOne[inverse].map { [$0] } ?? $0.toMany[inverse] ?? [] }
                }
                result.formUnion(current.filter { model.isKind($0.entityName, of: dependency.indexed) })
            }
        }
        return result
    }
}
