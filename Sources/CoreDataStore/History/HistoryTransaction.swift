import Foundation

/// One saved transaction of persistent history (an `ATRANSACTION` row) with its changes.
public struct HistoryTransaction: Sendable, Hashable {
    /// The transaction number (`Z_PK`): history tokens are these numbers.
    public var number: Int64
    /// When the save happened.
    public var timestamp: Date
    /// The context's `transactionAuthor`, if set.
    public var author: String?
    /// The saving app's bundle identifier.
    public var bundleID: String?
    /// The saving process's name.
    public var processID: String?
    /// The saving context's name, if set.
    public var contextName: String?
    /// The objects the save changed, ordered by change number.
    public var changes: [HistoryChange]

    /// Creates a transaction.
    public init(number: Int64, timestamp: Date, author: String? = nil, bundleID: String? = nil,
                processID: String? = nil, contextName: String? = nil, changes: [HistoryChange] = []) {
        self.number = number
        self.timestamp = timestamp
        self.author = author
        self.bundleID = bundleID
        self.processID = processID
        self.contextName = contextName
        self.changes = changes
    }
}

/// One changed object within a transaction (an `ACHANGE` row).
public struct HistoryChange: Sendable, Hashable {
    /// What happened to the object.
    public enum ChangeType: Int, Sendable, Hashable, Codable {
        /// The object was inserted.
        case insert = 0
        /// The object was updated.
        case update = 1
        /// The object was deleted.
        case delete = 2

        /// `insert`, `update` or `delete`.
        public var name: String {
            switch self {
            case .insert: "insert"
            case .update: "update"
            case .delete: "delete"
            }
        }
    }

    /// The change row's number (`ACHANGE.Z_PK`).
    public var number: Int64
    /// The changed object.
    public var objectID: ManagedObjectID
    /// Insert, update or delete.
    public var type: ChangeType
    /// For updates, the properties `ZCOLUMNS` flags as written. **Advisory only**: which bit means
    /// which property is not settled (see the store-format reference), so never skip work on it.
    public var updatedProperties: [String]?
    /// For deletes, the preserved attributes' last values (attributes marked "preserve after deletion").
    public var tombstone: [String: AttributeValue]?

    /// Creates a change.
    public init(number: Int64, objectID: ManagedObjectID, type: ChangeType,
                updatedProperties: [String]? = nil, tombstone: [String: AttributeValue]? = nil) {
        self.number = number
        self.objectID = objectID
        self.type = type
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
    }
}

/// The range of transactions a store still holds.
public struct HistoryBounds: Sendable, Hashable {
    /// The oldest transaction still present, or nil when history is empty (never written or purged).
    public var oldest: Int64?
    /// The newest transaction number ever handed out (0 when none).
    public var newest: Int64

    /// Whether a consumer that has processed everything up to `token` can continue from history:
    /// false when transactions after the token were purged (Core Data's "history token expired").
    public func canResume(from token: Int64) -> Bool {
        // A token from the future means the store was replaced or its history reset.
        guard token <= newest else { return false }
        // Everything purged: only a consumer that had already seen the newest transaction lost nothing.
        guard let oldest else { return token == newest }
        return token >= oldest - 1
    }
}

extension ManagedObjectModel {
    /// The properties an `ACHANGE.ZCOLUMNS` bitmap numbers for an entity, bit 0 first.
    ///
    /// Searchlight uses one list: every stored attribute and relationship of the entity, inherited
    /// ones included, sorted by name. Apple's exact order is disputed, so readers treat the decoded
    /// names as a hint only.
    public func historyColumnOrder(of entity: String) -> [String] {
        let attributes = allAttributes(of: entity).filter(\.isStored).map(\.name)
        let relationships = allRelationships(of: entity).filter { !$0.isTransient }.map(\.name)
        return (attributes + relationships).sorted()
    }

    /// The attributes whose values a delete keeps in `ACHANGE.ZTOMBSTONE<n>`, in column order: inherited
    /// ones first (root first), each level by name, as the real stores show (knowledgeC's Event keeps
    /// `uuid` then `shouldSync`; one global name order would misplace all 1,014 of its values).
    public func tombstoneAttributes(of entity: String) -> [AttributeDescription] {
        allAttributes(of: entity).filter(\.preservesValueInHistoryOnDeletion)
    }
}

/// Encodes and decodes `ZCOLUMNS` bitmaps: bits most-significant first within each byte.
enum HistoryColumnBitmap {
    static func encode(_ properties: Set<String>, order: [String]) -> Data {
        var bytes = [UInt8](repeating: 0, count: (order.count + 7) / 8)
        for (bit, name) in order.enumerated() where properties.contains(name) {
            bytes[bit / 8] |= 0x80 >> UInt8(bit % 8)
        }
        return Data(bytes)
    }

    static func decode(_ bitmap: Data, order: [String]) -> [String] {
        let bytes = [UInt8](bitmap)
        return order.enumerated().compactMap { bit, name in
            bit / 8 < bytes.count && bytes[bit / 8] & (0x80 >> UInt8(bit % 8)) != 0 ? name : nil
        }
    }
}
