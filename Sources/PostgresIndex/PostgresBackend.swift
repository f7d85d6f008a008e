import SearchIndex

/// Opens an index on PostgreSQL from synchronous code (a command line), in any build: without the
/// `PostgreSQL` trait every call fails with ``PostgresIndexError/notBuilt``, so a caller needs no
/// conditional compilation of its own.
public enum PostgresBackend {
    /// Whether this build has the PostgreSQL backend.
    public static var isBuilt: Bool {
        #if PostgreSQL
        true
        #else
        false
        #endif
    }

    /// Opens the index at `location` for reading: a primary or a streaming replica. Blocks until connected.
    public static func openReader(_ location: PostgresLocation) throws(PostgresIndexError) -> any IndexReader {
        #if PostgreSQL
        try PostgresIndex.waiting(watching: nil) { () async throws(PostgresIndexError) in try await PostgresIndex.open(location, creating: false) }.get()
        #else
        throw .notBuilt
        #endif
    }

    /// Opens the index at `location` for writing (creating or migrating its schema): a writer that
    /// claims each store it is asked to write. Blocks until connected.
    public static func openWriter(_ location: PostgresLocation) throws(PostgresIndexError) -> any IndexWriter {
        #if PostgreSQL
        try PostgresIndex.waiting(watching: nil) { () async throws(PostgresIndexError) in
            let index = try await PostgresIndex.open(location, creating: true)
            return try await PostgresIndexWriter.open(index)
        }.get()
        #else
        throw .notBuilt
        #endif
    }
}

extension PostgresIndexError {
    /// The error as the index protocols report it: a request's own error as itself, the server's in its
    /// words (temporary when the server, or a store's writer elsewhere, may let a later try succeed).
    public var indexError: SearchIndexError {
        switch self {
        case .search(let error): error
        case .unsupported: .unsupported(message: description)
        case .schemaTooNew(let found, _): .newerSchema(path: "the PostgreSQL database", version: found)
        case .schemaTooOld: .needsUpgrade(path: "the PostgreSQL database")
        case .unreachable, .connectionLost, .writerActive, .checkpointMoved: .backend(message: description, isTemporary: true)
        default: .backend(message: description, isTemporary: false)
        }
    }
}
