import Foundation

/// The permanent identity of a saved object: `x-coredata://<store UUID>/<Entity>/p<primary key>`.
///
/// This string is what `NSPersistentStoreCoordinator.managedObjectID(forURIRepresentation:)` accepts,
/// so it is the deep link an app resolves. The entity is the object's own (concrete) entity, never
/// the root of its hierarchy: a `GraphicNovel` row of table `ZBOOK` is `…/GraphicNovel/p11`.
public struct ManagedObjectID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The store's UUID (`Z_METADATA.Z_UUID`).
    public var storeUUID: String
    /// The object's concrete entity name.
    public var entityName: String
    /// The object's `Z_PK`.
    public var primaryKey: Int64

    /// Creates an object ID.
    public init(storeUUID: String, entityName: String, primaryKey: Int64) {
        self.storeUUID = storeUUID
        self.entityName = entityName
        self.primaryKey = primaryKey
    }

    /// The URI representation, `x-coredata://<UUID>/<Entity>/p<pk>`.
    public var uriRepresentation: String { "x-coredata://\(storeUUID)/\(entityName)/p\(primaryKey)" }

    public var description: String { uriRepresentation }

    /// Parses a URI representation; temporary IDs and malformed strings are rejected with a reason.
    public init(uriRepresentation uri: String) throws(CoreDataStoreError) {
        let prefix = "x-coredata://"
        guard uri.hasPrefix(prefix) else {
            throw .malformedObjectURI(uri: uri, reason: "it does not start with \(prefix)")
        }
        let parts = uri.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        if parts.first?.isEmpty == true, parts.count == 3, parts[2].hasPrefix("t") {
            throw .temporaryObjectID(uri: uri) // x-coredata:///Entity/t<UUID>
        }
        guard parts.count == 3 else {
            throw .malformedObjectURI(uri: uri, reason: "it needs exactly three parts after x-coredata://")
        }
        let (host, entity, key) = (String(parts[0]), String(parts[1]), parts[2])
        guard !host.isEmpty else { throw .malformedObjectURI(uri: uri, reason: "the store UUID is missing") }
        guard !entity.isEmpty, entity.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            throw .malformedObjectURI(uri: uri, reason: "'\(entity)' is not an entity name")
        }
        if key.hasPrefix("t") { throw .temporaryObjectID(uri: uri) }
        guard key.hasPrefix("p"), let primaryKey = Int64(key.dropFirst()), primaryKey > 0,
              key.dropFirst().allSatisfy(\.isASCII)
        else {
            throw .malformedObjectURI(uri: uri, reason: "'\(key)' is not p followed by a positive number")
        }
        self.init(storeUUID: host, entityName: entity, primaryKey: primaryKey)
    }

    /// Hashes the primary key only: IDs compared together almost always share store and entity, and
    /// hashing the 36-character UUID on every dictionary operation dominated bulk fetches.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(primaryKey)
    }

    public static func < (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        (lhs.storeUUID, lhs.entityName, lhs.primaryKey) < (rhs.storeUUID, rhs.entityName, rhs.primaryKey)
    }
}
