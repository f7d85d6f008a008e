import CoreDataStore
import SearchIndex

/// Code that decides an entity's items: reshapes the item the configuration built, or leaves the object out
/// of the index — `NSCoreDataCoreSpotlightDelegate.attributeSet(for:)` for Searchlight.
///
/// A producer runs on the thread of the exporter's producing stage for every object of its entity (and the
/// entity's subentities without a producer of their own), in a first export, in a catch-up and in a reindex. It sees
/// the object's own attributes and relationship IDs: a change to a related object re-indexes it only when the
/// configuration's key paths reach that object.
///
/// Bump ``version`` whenever what the producer returns changes for the same object: the index is then rebuilt
/// on the next catch-up, as when the configuration changes.
public protocol ItemProducer: Sendable {
    /// Names what the producer returns; a new version rebuilds the index's items of the store.
    var version: String { get }

    /// The item to index for `object`, or nil to leave it out (an item it had is removed).
    ///
    /// - Parameters:
    ///   - object: The object, as the store holds it now.
    ///   - proposed: The item the configuration's expressions built for it. Its URI and entity are the
    ///     object's: a returned item with others keeps the object's.
    func item(for object: ManagedObjectSnapshot, proposed: IndexedItem) -> IndexedItem?
}

extension ItemProducer {
    public var version: String { "1" }
}

/// An ``ItemProducer`` made of a closure.
public struct ClosureItemProducer: ItemProducer {
    public let version: String
    private let body: @Sendable (ManagedObjectSnapshot, IndexedItem) -> IndexedItem?

    /// A producer that calls `body` with each object and its proposed item.
    public init(version: String = "1", _ body: @escaping @Sendable (ManagedObjectSnapshot, IndexedItem) -> IndexedItem?) {
        self.version = version
        self.body = body
    }

    public func item(for object: ManagedObjectSnapshot, proposed: IndexedItem) -> IndexedItem? { body(object, proposed) }
}
