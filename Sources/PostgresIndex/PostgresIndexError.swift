import SearchIndex

/// Why an index on PostgreSQL could not do what was asked, worded for the person at the terminal.
public enum PostgresIndexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The index location is not a `postgres://user@host:port/database` URL.
    case invalidLocation(String, reason: String)
    /// This build has no PostgreSQL backend (it was built without the `PostgreSQL` trait).
    case notBuilt
    /// The server could not be reached.
    case unreachable(location: String, reason: String)
    /// The server refused the location's user, password or database: trying again will not help.
    case refused(location: String, reason: String)
    /// The server refused a statement.
    case server(message: String, sqlState: String?)
    /// The connection broke mid-statement (the server restarted, crashed or was shut down): the transaction
    /// under way committed whole or not at all, and trying again later resumes from the last commit.
    case connectionLost(reason: String)
    /// Another exporter writes this store into the database (its advisory lock is held).
    case writerActive(storeUUID: String, holder: String?)
    /// The store's checkpoint moved under this writer: another process wrote the store.
    case checkpointMoved(storeUUID: String, expected: Int64, found: Int64?)
    /// The database holds a newer schema than this build knows.
    case schemaTooNew(found: Int, supported: Int)
    /// The database holds an older schema than searches need (a reader never migrates).
    case schemaTooOld(found: Int, needed: Int)
    /// The database's encoding is not UTF-8: lengths and prefixes of terms would be counted in bytes.
    case notUTF8(location: String, encoding: String)
    /// The database has no Searchlight index (a reader never creates one).
    case notAnIndex(location: String)
    /// A request the PostgreSQL backend does not answer yet, and what to do instead.
    case unsupported(String, instead: String = "use an SQLite index for it")
    /// A writer was used in a way it refuses (a store it did not claim, two transactions at once).
    case misuse(String)
    /// The request itself is invalid (the same errors the SQLite index gives).
    case search(SearchIndexError)

    /// A one-line explanation that names the fix.
    public var description: String {
        switch self {
        case .invalidLocation(let text, let reason):
            return "'\(text)' is not a PostgreSQL index location (\(reason)); write postgres://USER@HOST:PORT/DATABASE"
        case .notBuilt:
            return "this build has no PostgreSQL backend; build it with `swift build --traits PostgreSQL`"
        case .unreachable(let location, let reason):
            return "cannot connect to \(location): \(reason); check that the server runs and accepts this user"
        case .refused(let location, let reason):
            return "PostgreSQL at \(location) refused the connection: \(reason); check the user, password and database the location names"
        case .server(let message, let state):
            return "PostgreSQL refused a statement: \(message)" + (state.map { " (SQLSTATE \($0))" } ?? "")
        case .connectionLost(let reason):
            return "the connection to PostgreSQL broke (\(reason)); a batch under way was committed whole or not at all: run the command again once the server is back (an export resumes from its last commit)"
        case .writerActive(let uuid, let holder):
            return "another exporter is writing store \(uuid) into this database" + (holder.map { " (\($0))" } ?? "")
                + "; stop it, or wait until it finishes"
        case .checkpointMoved(let uuid, let expected, let found):
            return "store \(uuid)'s checkpoint moved from token \(expected) to \(found.map(String.init) ?? "none") under this writer; "
                + "another process wrote it: run the exporter again"
        case .schemaTooNew(let found, let supported):
            return "the database holds index schema \(found), newer than this searchctl's \(supported); use a newer searchctl"
        case .schemaTooOld(let found, let needed):
            return "the database holds index schema \(found); searches need schema \(needed): run `searchctl index` with this build once (any store) to migrate it"
        case .notUTF8(let location, let encoding):
            return "\(location) is encoded as \(encoding), not UTF8: create the database with `createdb -E UTF8 -T template0 …` (or `initdb -E UTF8`) and index again"
        case .notAnIndex(let location):
            return "\(location) holds no Searchlight index; create it with `searchctl index --store S --index \(location)`"
        case .unsupported(let what, let instead):
            return "the PostgreSQL index does not support \(what) yet; \(instead)"
        case .misuse(let message):
            return message
        case .search(let error):
            return error.description
        }
    }
}
