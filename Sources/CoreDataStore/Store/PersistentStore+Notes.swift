extension PersistentStore {
    /// How a store is read, when that is worth telling a user: nothing failed.
    public enum Note: Sendable, Hashable, CustomStringConvertible {
        /// The store's folder or companions cannot be written: it is read as an immutable file (its `-wal`
        /// is empty).
        case readAsImmutable
        /// The store's folder cannot be written and its `-wal` holds data: it is read from a private copy.
        case readFromPrivateCopy
        /// The store has no `Z_MODELCACHE` and no model file was given: the model is inferred from the
        /// tables (property names are lower-cased column names).
        case modelInferred
        /// The file has no join table or key column for these relationships (`Entity.name`): they read as
        /// empty.
        case unresolvedRelationships([String])

        public var description: String {
            switch self {
            case .readAsImmutable:
                "the store's folder or companions cannot be written: it is read as an immutable file (its -wal is empty)"
            case .readFromPrivateCopy:
                "the store's folder cannot be written and its -wal holds data: it is read from a private copy"
            case .modelInferred:
                "the store has no Z_MODELCACHE and no model file was given: the model is inferred from the tables "
                    + "(property names are lower-cased column names)"
            case .unresolvedRelationships(let names):
                "the file has no join table or key column for \(names.joined(separator: ", ")): these relationships read as empty"
            }
        }
    }

    /// How the file at a store's path stopped being the store a handle reads.
    public enum Change: Sendable, Hashable, CustomStringConvertible {
        /// Another file (a new inode) is at the path.
        case replaced
        /// The store's tables changed in place (a migration).
        case migrated

        public var description: String {
            switch self {
            case .replaced: "was replaced by another file"
            case .migrated: "changed its tables (a migration)"
            }
        }
    }
}
