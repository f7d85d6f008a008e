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
    /// The properties an `ACHANGE.ZCOLUMNS` bitmap numbers for an entity, bit 0 first (the most significant
    /// bit of the first byte). A property may fill two slots: a to-one's extra entity or order column.
    ///
    /// Settled on the real stores (4,037 update rows of RMAdminStore, knowledgeC and Photos: every bitmap's
    /// length, every set bit in range, every to-one and one-to-many bit matched by the inverse side's change):
    /// the to-one relationships by name; then their `Z<n>_` entity and `Z_FOK_` order columns, in table
    /// order; the stored attributes by name; then the one-to-many and after them the many-to-many
    /// relationships in the order of Foundation's hash table of the entity's property names. That last order
    /// is the least certain part (its table size fits two rules equally), so readers still treat the names as
    /// a hint and never skip work on them.
    public func historyColumnOrder(of entity: String) -> [String] {
        let relationships = allRelationships(of: entity).filter { !$0.isTransient }
        let toOne = relationships.filter { !$0.isToMany }
        var slots = toOne.map(\.name).sorted()
        for relationship in toOne {
            if !subentities(of: relationship.destinationEntityName).isEmpty { slots.append(relationship.name) }
            if let inverse = self.inverse(of: relationship), inverse.isToMany, inverse.isOrdered { slots.append(relationship.name) }
        }
        slots += allAttributes(of: entity).filter(\.isStored).map(\.name).sorted()
        let toMany = relationships.filter(\.isToMany)
        let order = HashTableOrder(keys: allAttributes(of: entity).map(\.name) + allRelationships(of: entity).filter { !$0.isToMany }.map(\.name)
                                   + allRelationships(of: entity).filter(\.isToMany).map(\.name))
        let manyToMany = Set(toMany.filter { self.inverse(of: $0)?.isToMany == true }.map(\.name))
        slots += order.sorted(toMany.map(\.name).filter { !manyToMany.contains($0) })
        slots += order.sorted(toMany.map(\.name).filter { manyToMany.contains($0) })
        return slots
    }

    /// The attributes whose values a delete keeps in `ACHANGE.ZTOMBSTONE<n>`, in column order: inherited
    /// ones first (root first), each level by name, as the real stores show (knowledgeC's Event keeps
    /// `uuid` then `shouldSync`; one global name order would misplace all 1,014 of its values).
    public func tombstoneAttributes(of entity: String) -> [AttributeDescription] {
        allAttributes(of: entity).filter(\.preservesValueInHistoryOnDeletion)
    }
}

/// Encodes and decodes `ZCOLUMNS` bitmaps: bits most-significant first within each byte.
package enum HistoryColumnBitmap {
    package static func encode(_ properties: Set<String>, order: [String]) -> Data {
        var bytes = [UInt8](repeating: 0, count: (order.count + 7) / 8)
        for (bit, name) in order.enumerated() where properties.contains(name) {
            bytes[bit / 8] |= 0x80 >> UInt8(bit % 8)
        }
        return Data(bytes)
    }

    package static func decode(_ bitmap: Data, order: [String]) -> [String] {
        let bytes = [UInt8](bitmap)
        return order.enumerated().compactMap { bit, name in
            bit / 8 < bytes.count && bytes[bit / 8] & (0x80 >> UInt8(bit % 8)) != 0 ? name : nil
        }
    }
}

/// The order in which Foundation's hash table (CFString hash, open addressing with linear probing) holds a
/// set of names: where Core Data's `ZCOLUMNS` puts to-many relationships.
struct HashTableOrder {
    private var positions: [String: Int] = [:]

    /// Foundation's table sizes, and how many keys each holds before it grows.
    private static let sizes = [3, 7, 13, 23, 41, 71, 127, 191, 251, 383, 631, 1087, 1723, 2803, 4523, 7351, 11959]
    private static let capacities = [3, 6, 11, 19, 32, 52, 85, 118, 155, 237, 390, 672, 1065, 1732, 2795, 4543, 7391]

    /// Inserts `keys` in order into a table sized for 4/3 of their count.
    init(keys: [String]) {
        let needed = (keys.count * 4 + 2) / 3
        let size = zip(Self.capacities, Self.sizes).first { $0.0 >= needed }?.1 ?? (Self.sizes.last ?? 1)
        var table = [String?](repeating: nil, count: size)
        for key in keys where positions[key] == nil && positions.count < size {
            var slot = Int(Self.hash(key) % UInt64(size))
            while table[slot] != nil { slot = (slot + 1) % size }
            table[slot] = key
            positions[key] = slot
        }
    }

    /// `names` in table order (names the table does not hold last, by name).
    func sorted(_ names: [String]) -> [String] {
        names.sorted { (positions[$0] ?? Int.max, $0) < (positions[$1] ?? Int.max, $1) }
    }

    /// CFString's hash of a string of up to 96 UTF-16 units (names are short).
    package static func hash(_ text: String) -> UInt64 {
        let units = Array(text.utf16)
        var result = UInt64(units.count)
        var index = 0
        let whole = units.count & ~3
        while index < whole {
            result = result &* 67_503_105 &+ UInt64(units[index]) &* 16_974_593 &+ UInt64(units[index + 1]) &* 66_049
                &+ UInt64(units[index + 2]) &* 257 &+ UInt64(units[index + 3])
            index += 4
        }
        while index < units.count {
            result = result &* 257 &+ UInt64(units[index])
            index += 1
        }
        return result &+ (result << UInt64(units.count & 31))
    }
}
