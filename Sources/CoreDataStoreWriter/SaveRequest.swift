import CoreDataStore
import Foundation

/// An object a save refers to: one already in the store, or one the same save inserts.
public enum ObjectReference: Sendable, Hashable {
    /// A saved object.
    case saved(ManagedObjectID)
    /// The n-th object inserted by the same ``SaveRequest``.
    case inserted(Int)
}

/// The new value of a relationship.
public enum RelationshipValue: Sendable, Hashable {
    /// A to-one relationship's destination, or nil to clear it.
    case toOne(ObjectReference?)
    /// A to-many relationship's complete new contents (in order, for ordered relationships).
    case toMany([ObjectReference])
}

/// One save of a managed object context: inserts, updates and deletes that the writer applies as one
/// SQLite transaction and records as one history transaction, as Core Data does.
public struct SaveRequest: Sendable {
    /// An object to insert.
    public struct Insert: Sendable {
        /// The (concrete) entity.
        public var entity: String
        /// Attribute values; attributes not given take the model's default value.
        public var attributes: [String: AttributeValue]
        /// Relationship values.
        public var relationships: [String: RelationshipValue]
    }

    /// Changes to a saved object.
    public struct Update: Sendable {
        /// The object.
        public var objectID: ManagedObjectID
        /// New attribute values.
        public var attributes: [String: AttributeValue]
        /// New relationship values.
        public var relationships: [String: RelationshipValue]
    }

    /// Objects to insert, in order.
    public private(set) var inserts: [Insert] = []
    /// Updates of saved objects, in order of first mention.
    public private(set) var updates: [Update] = []
    /// Saved objects to delete (delete rules then apply to their relationships).
    public private(set) var deletes: [ManagedObjectID] = []

    /// The history transaction's author (`NSManagedObjectContext.transactionAuthor`).
    public var author: String?
    /// The saving context's name.
    public var contextName: String?
    /// The app's bundle identifier recorded in history.
    public var bundleID: String?
    /// The process name recorded in history.
    public var processID: String?
    /// The transaction's timestamp; now when nil.
    public var timestamp: Date?

    /// Creates an empty save.
    public init(author: String? = nil, contextName: String? = nil, bundleID: String? = nil, processID: String? = nil) {
        self.author = author
        self.contextName = contextName
        self.bundleID = bundleID
        self.processID = processID
    }

    /// Whether the save changes nothing.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }

    /// Inserts an object and returns a reference other changes of this save can use.
    @discardableResult
    public mutating func insert(
        _ entity: String, attributes: [String: AttributeValue] = [:], relationships: [String: RelationshipValue] = [:]
    ) -> ObjectReference {
        inserts.append(Insert(entity: entity, attributes: attributes, relationships: relationships))
        return .inserted(inserts.count - 1)
    }

    /// Changes attributes and relationships of an object (saved, or inserted by this save).
    public mutating func update(
        _ object: ObjectReference, attributes: [String: AttributeValue] = [:], relationships: [String: RelationshipValue] = [:]
    ) {
        switch object {
        case .inserted(let index) where inserts.indices.contains(index):
            inserts[index].attributes.merge(attributes) { _, new in new }
            inserts[index].relationships.merge(relationships) { _, new in new }
        case .inserted:
            return
        case .saved(let id):
            if let index = updates.firstIndex(where: { $0.objectID == id }) {
                updates[index].attributes.merge(attributes) { _, new in new }
                updates[index].relationships.merge(relationships) { _, new in new }
            } else {
                updates.append(Update(objectID: id, attributes: attributes, relationships: relationships))
            }
        }
    }

    /// Deletes a saved object.
    public mutating func delete(_ object: ManagedObjectID) {
        if !deletes.contains(object) { deletes.append(object) }
    }
}

/// What a save did.
public struct SaveResult: Sendable, Hashable {
    /// The history transaction number, or nil when the store does not track history.
    public var transactionNumber: Int64?
    /// The permanent IDs handed to the inserted objects, in insert order (aligned with the request's
    /// inserts; those in ``discardedObjectIDs`` were not written).
    public var insertedObjectIDs: [ManagedObjectID]
    /// Objects recorded as updated (explicitly or because an inverse relationship changed).
    public var updatedObjectIDs: [ManagedObjectID]
    /// Objects deleted, cascades included.
    public var deletedObjectIDs: [ManagedObjectID]
    /// Objects inserted by this save that a cascade delete of the same save removed again: like
    /// Core Data, the writer never saves them.
    public var discardedObjectIDs: [ManagedObjectID]
}
