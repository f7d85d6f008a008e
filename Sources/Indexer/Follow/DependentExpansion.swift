import CoreDataStore

/// The stage after coalescing: the indexed objects whose items show a changed object through a relationship
/// (a renamed country's places), found by walking the configuration's key paths backwards through their
/// inverses in the batch's store snapshot.
struct DependentExpansion: Sendable {
    let configuration: ResolvedConfiguration
    /// Which entities' objects are shown by which indexed entities, through which inverses.
    let digests: ShownValueDigests

    /// Indexed objects whose items show one of `changed` (not `changed` themselves, unless one shows another).
    func dependents(of changed: Set<ManagedObjectID>, in snapshot: StoreSnapshot) throws -> Set<ManagedObjectID> {
        var result: Set<ManagedObjectID> = []
        let model = configuration.model
        for (entity, ids) in Dictionary(grouping: changed, by: \.entityName) {
            for dependency in digests.entries(for: entity) {
                var current = Array(ids)
                for inverse in dependency.inverses where !current.isEmpty {
                    let objects = try snapshot.objects(current, relationships: .toOneAnd([inverse]))
                    current = objects.values.flatMap { $0.toOne[inverse].map { [$0] } ?? $0.toMany[inverse] ?? [] }
                }
                result.formUnion(current.filter { model.isKind($0.entityName, of: dependency.indexed) })
            }
        }
        return result
    }
}
