/// A fetch request stored in the model (Xcode's "Fetch Requests"), its predicate possibly holding
/// substitution variables (`humanName == $humanName`).
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template's name (`fetchRequestTemplate(forName:)`).
    public var name: String
    /// The entity it fetches.
    public var entityName: String
    /// Its predicate in `NSPredicate` format, or nil for every object of the entity.
    public var predicate: String?

    /// Creates a template.
    public init(name: String, entityName: String, predicate: String?) {
        self.name = name
        self.entityName = entityName
        self.predicate = predicate
    }
}
