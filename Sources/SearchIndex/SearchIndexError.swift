/// Everything that can go wrong with an index: the facts, and a description in plain words.
public enum SearchIndexError: Error, Sendable, Equatable {
    /// No index exists at the path.
    case indexNotFound(path: String)
    /// The file is not a Searchlight index (or is damaged).
    case notAnIndex(path: String, detail: String)
    /// A file at or beside the index path is not one Searchlight may write (a symbolic link, another
    /// user's file, a second name of another file).
    case unsafeFile(path: String, reason: String)
    /// The folder a new index would be created in does not exist.
    case folderNotFound(path: String, folder: String)
    /// The index file was deleted or replaced while a writer had it open.
    case indexReplaced(path: String, reason: String)
    /// The index was written by an older Searchlight and is opened read-only, so it cannot be migrated.
    case needsUpgrade(path: String)
    /// The index was written by a newer Searchlight.
    case newerSchema(path: String, version: Int)
    /// The query text cannot be searched; the reason says how to fix it.
    case invalidQuery(reason: String)
    /// The request cannot be searched (see ``SearchRequest/Problem``).
    case invalidRequest(SearchRequest.Problem)
    /// A filter predicate cannot be parsed or applied; `position` is the character (from 1) where.
    case invalidPredicate(reason: String, position: Int)
    /// The search ran past its time limit and was stopped.
    case searchTooExpensive(seconds: Double)
    /// A coordinate, radius or box is out of range.
    case invalidLocation(reason: String)
    /// Another process holds a lock long enough that the operation gave up.
    case busy(path: String)
    /// A batch is inconsistent (e.g. an item of another store).
    case invalidBatch(reason: String)
    /// The task running an async search, count, dump or explain was cancelled: the read stopped.
    case cancelled
    /// The database reported an error none of the cases above explains.
    case database(path: String, message: String)
    /// Another backend (a PostgreSQL server) refused or failed, in its own words; `isTemporary` when
    /// trying again later may succeed (the server unreachable, the store's writer busy elsewhere).
    case backend(message: String, isTemporary: Bool)
    /// A request this backend does not answer (yet), in its words, with what to do instead.
    case unsupported(message: String)
}

extension SearchIndexError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .indexNotFound(let path):
            "no index at \(path); build one by indexing a store into it"
        case .notAnIndex(let path, let detail) where detail.contains("damaged"):
            "\(path) is damaged (\(detail.replacingOccurrences(of: "it is damaged: ", with: ""))); rebuild it: remove it and index its stores again"
        case .notAnIndex(let path, let detail):
            "\(path) is not a Searchlight index (\(detail))"
        case .unsafeFile(let path, let reason):
            "refusing to write \(path): \(reason)"
        case .folderNotFound(let path, let folder):
            "cannot create \(path): the folder \(folder) does not exist"
        case .indexReplaced(let path, let reason):
            "\(path) \(reason) while it was being written; nothing more was written to it"
        case .needsUpgrade(let path):
            "\(path) was written by an older Searchlight; index its store once to upgrade it"
        case .newerSchema(let path, let version):
            "\(path) has schema version \(version), newer than this Searchlight understands; upgrade Searchlight"
        case .invalidQuery(let reason):
            "invalid query: \(reason)"
        case .invalidRequest(let problem):
            "invalid query: \(problem)"
        case .invalidPredicate(let reason, let position):
            "invalid filter at character \(position): \(reason)"
        case .searchTooExpensive(let seconds):
            "the search was stopped after \(seconds.formatted(.number.precision(.fractionLength(0...1)))) s; narrow it: fewer OR alternatives, longer prefixes (tok* rather than t*), a smaller radius or box"
        case .invalidLocation(let reason):
            "invalid location: \(reason)"
        case .busy(let path):
            "\(path) is locked by another process; try again in a moment"
        case .invalidBatch(let reason):
            "invalid batch: \(reason)"
        case .cancelled:
            "the search was cancelled with the task that asked for it, and read nothing more; ask again if its answer is still wanted"
        case .database(let path, let message):
            "\(path): database error: \(message); if the file is intact, this is a Searchlight bug: please report it"
        case .backend(let message, _), .unsupported(let message):
            message
        }
    }
}
