/// One relationship of an entity, as the model declares it.
public struct RelationshipDescription: Sendable, Hashable {
    /// What happens to related objects when the source object is deleted (`NSDeleteRule`).
    public enum DeleteRule: Int, Sendable, Codable {
        /// Leave related objects pointing at the deleted object.
        case noAction = 0
        /// Clear the inverse relationship of related objects.
        case nullify = 1
        /// Delete related objects too.
        case cascade = 2
        /// Refuse the delete while related objects exist.
        case deny = 3

        /// The `deletionRule` spelling of `.xcdatamodel` files.
        public var modelFileName: String {
            switch self {
            case .noAction: "No Action"
            case .nullify: "Nullify"
            case .cascade: "Cascade"
            case .deny: "Deny"
            }
        }

        /// Parses the `deletionRule` spelling of `.xcdatamodel` files.
        public init(modelFileName: String?) {
            switch modelFileName {
            case "Cascade": self = .cascade
            case "Deny": self = .deny
            case "No Action": self = .noAction
            default: self = .nullify
            }
        }
    }

    /// The property name.
    public var name: String
    /// The entity the relationship points at.
    public var destinationEntityName: String
    /// The inverse relationship's name on the destination, if there is one.
    public var inverseName: String?
    /// Whether the relationship holds many objects.
    public var isToMany: Bool
    /// Whether a to-many relationship keeps its order (`NSOrderedSet`).
    public var isOrdered: Bool
    /// Whether the relationship may be empty.
    public var isOptional: Bool
    /// Whether the relationship lives only in memory.
    public var isTransient: Bool
    /// The minimum number of related objects (0 = no minimum).
    public var minCount: Int
    /// The maximum number of related objects (0 = unbounded; 1 for to-one).
    public var maxCount: Int
    /// The delete rule.
    public var deleteRule: DeleteRule
    /// Whether the model marks the relationship "Index in Spotlight".
    public var isIndexedBySpotlight: Bool
    /// The previous name, for migrations.
    public var renamingIdentifier: String?
    /// The model's user info entries.
    public var userInfo: [String: String]

    /// Creates a relationship; every flag not given takes Core Data's default.
    public init(
        name: String, destinationEntityName: String, inverseName: String? = nil, isToMany: Bool = false,
        isOrdered: Bool = false, isOptional: Bool = true, isTransient: Bool = false, minCount: Int = 0,
        maxCount: Int? = nil, deleteRule: DeleteRule = .nullify, isIndexedBySpotlight: Bool = false,
        renamingIdentifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destinationEntityName = destinationEntityName
        self.inverseName = inverseName
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        self.deleteRule = deleteRule
        self.isIndexedBySpotlight = isIndexedBySpotlight
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }
}
