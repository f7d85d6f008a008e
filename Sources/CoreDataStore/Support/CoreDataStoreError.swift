/// Everything that can go wrong reading or writing a Core Data store: the facts, and a description that says
/// what happened and what to do.
public enum CoreDataStoreError: Error, Sendable, Equatable {
    /// The file does not exist.
    case fileNotFound(path: String)
    /// The file is not an SQLite database (random bytes, truncated, encrypted).
    case notADatabase(path: String, detail: String)
    /// The file is an SQLite database but not a Core Data store.
    case notACoreDataStore(path: String, missing: String)
    /// The store is damaged or uses a format this reader cannot read.
    case unsupportedStore(path: String, detail: String)
    /// The store has no persistent history tables.
    case historyNotTracked(path: String)
    /// A model description is unusable.
    case invalidModel(reason: String)
    /// A model file cannot be read.
    case invalidModelFile(path: String, reason: String)
    /// The given model does not describe this store.
    case modelMismatch(differences: [String])
    /// A string is not an object-ID URI.
    case malformedObjectURI(uri: String, reason: String)
    /// A temporary object ID (never saved) cannot be resolved from disk.
    case temporaryObjectID(uri: String)
    /// An object ID belongs to another store.
    case foreignObjectID(uri: String, storeUUID: String)
    /// An entity name is not in the model.
    case unknownEntity(name: String)
    /// A property name is not on the entity.
    case unknownProperty(entity: String, property: String)
    /// A value does not fit the attribute or relationship it is given to.
    case invalidValue(entity: String, property: String, reason: String)
    /// A save breaks a rule of the model or store (missing object, delete denied, uniqueness).
    case saveRejected(reason: String)
    /// Another connection holds a lock long enough that the read or write gave up.
    case busy(path: String)
    /// The database reported an error that none of the cases above explains.
    case database(path: String, message: String)
}

extension CoreDataStoreError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .fileNotFound(let path):
            "\(path): no such file; check the path"
        case .notADatabase(let path, let detail):
            "\(path) is not an SQLite database (\(detail)); a Core Data store is an app's .sqlite file"
        case .notACoreDataStore(let path, let missing):
            "\(path) is an SQLite database but not a Core Data store (no \(missing) table)"
        case .unsupportedStore(let path, let detail):
            "\(path) cannot be read as a Core Data store: \(detail)"
        case .historyNotTracked(let path):
            "\(path) has no persistent history (no ATRANSACTION table); turn on NSPersistentHistoryTrackingKey in the app's store description and save once"
        case .invalidModel(let reason):
            "invalid model: \(reason)"
        case .invalidModelFile(let path, let reason):
            "cannot read model \(path): \(reason); pass a .xcdatamodeld bundle, a .xcdatamodel folder or its contents file"
        case .modelMismatch(let differences):
            "the model does not match the store: " + differences.joined(separator: "; ")
                + "; use the model version the store was written with, or the store's own model"
        case .malformedObjectURI(let uri, let reason):
            "malformed object URI '\(uri)': \(reason); expected x-coredata://<store-uuid>/<Entity>/p<number>"
        case .temporaryObjectID(let uri):
            "'\(uri)' is a temporary object ID of an unsaved object; only URIs of saved objects (…/p<number>) can be resolved"
        case .foreignObjectID(let uri, let storeUUID):
            "'\(uri)' belongs to another store; this store's UUID is \(storeUUID)"
        case .unknownEntity(let name):
            "the model has no entity named '\(name)'"
        case .unknownProperty(let entity, let property):
            "entity \(entity) has no property named '\(property)'"
        case .invalidValue(let entity, let property, let reason):
            "invalid value for \(entity).\(property): \(reason)"
        case .saveRejected(let reason):
            "save rejected: \(reason)"
        case .busy(let path):
            "\(path) is locked by another process; try again in a moment"
        case .database(let path, let message):
            "\(path): database error: \(message); if the file is intact, this is a Searchlight bug: please report it"
        }
    }
}
