#if PostgreSQL
import Foundation
import Logging
import PostgresNIO
import SearchIndex
import Synchronization

/// Searchlight's index on PostgreSQL + PostGIS: the items, checkpoints and answers of an SQLite index
/// file, in one database that many exporters write and many readers (and replicas) search.
///
/// Text is tokenized by Searchlight's ICU tokenizer and stored as a `tsvector` with positions (GIN);
/// places are `geography(Point)` (GiST); ranking is the SQLite index's own scoring code, fed with the
/// positions PostgreSQL stores. Each store has one writer at a time (``PostgresIndexWriter``), enforced by
/// an advisory lock in the database, and each batch commits with its store's checkpoint.
public final class PostgresIndex: Sendable {
    /// Where the index is.
    public let postgresLocation: PostgresLocation
    /// One connection per index value: PostgreSQL runs its statements one after another, and
    /// postgres-nio queues concurrent searches on it.
    let connection: PostgresConnection
    /// The schema version the database held when this index opened it (after migrating, for a writer):
    /// a reader of an older one answers what it can and says how to migrate for what it cannot.
    let openedSchema = Atomic<Int>(0)
    /// The attributes found to hold more distinct texts than a `MATCHES` reads one by one, with that
    /// limit: later searches check their rows in Swift without reading the texts again. Never forgotten while
    /// the index is open (an attribute's texts rarely shrink; its rows are then still decided exactly).
    let attributesPastTextLimit = Mutex<[String: Int]>([:])

    /// Logs nothing: errors reach the caller as ``PostgresIndexError``.
    static let logger: Logger = {
        var logger = Logger(label: "searchlight.postgres")
        logger.logLevel = .critical
        return logger
    }()

    private init(location: PostgresLocation, connection: PostgresConnection) {
        self.postgresLocation = location
        self.connection = connection
    }

    /// Connects to the index at `location`; with `creating`, creates or migrates its schema first (a
    /// writer), otherwise only checks that the database holds an index this build can read (a reader,
    /// which may be a read-only replica).
    public static func open(_ location: PostgresLocation, creating: Bool) async throws(PostgresIndexError) -> PostgresIndex {
        let connection = try await connect(location)
        let index = PostgresIndex(location: location, connection: connection)
        do {
            try await index.checkEncoding()
            if creating { try await index.migrate() }
            index.openedSchema.store(try await index.checkSchema(), ordering: .relaxed)
        } catch {
            await index.close()
            throw error
        }
        return index
    }

    /// Opens a connection to the server.
    static func connect(_ location: PostgresLocation) async throws(PostgresIndexError) -> PostgresConnection {
        var configuration = PostgresConnection.Configuration(host: location.host, port: location.port, username: location.user,
                                                             password: location.password, database: location.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        // Searches are many short statements whose cost estimates can run high (a lateral per row): JIT
        // compiling one took longer than running it (2.8 s against 90 ms for a filter over 34,258 items).
        configuration.options.additionalStartupParameters = [("jit", "off")]
        do {
            return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            // Classes 28 (authorization) and 3D (no such database): the location is wrong, not the network.
            if let state = (error as? PSQLError)?.serverInfo?[.sqlState], state.hasPrefix("28") || state.hasPrefix("3D") {
                throw .refused(location: location.description, reason: Self.reason(error))
            }
            throw .unreachable(location: location.description, reason: Self.reason(error))
        }
    }

    /// Closes the connection.
    public func close() async {
        try? await connection.close()
    }

    /// An index dropped without ``close()`` closes its connection too (closing twice does nothing).
    deinit {
        // Kept alive until it is closed: postgres-nio asserts a connection is closed before it goes.
        let connection = connection
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    // MARK: Statements

    /// Runs a statement and collects its rows.
    func rows(_ sql: String, _ bindings: PostgresBindings = PostgresBindings(), on connection: PostgresConnection? = nil) async throws(PostgresIndexError) -> [PostgresRow] {
        try await Self.rows(sql, bindings, on: connection ?? self.connection)
    }

    static func rows(_ sql: String, _ bindings: PostgresBindings = PostgresBindings(), on connection: PostgresConnection) async throws(PostgresIndexError) -> [PostgresRow] {
        do {
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) { rows.append(row) }
            return rows
        } catch {
            throw mapped(error)
        }
    }

    /// Runs statements that return nothing (schema scripts, transaction control), one after another: the
    /// extended protocol takes one statement at a time. Scripts hold no semicolon but between statements.
    static func execute(_ script: String, on connection: PostgresConnection) async throws(PostgresIndexError) {
        for statement in script.split(separator: ";") where !statement.allSatisfy(\.isWhitespace) {
            _ = try await rows(String(statement), on: connection)
        }
    }

    /// The error a statement's failure reports.
    static func mapped(_ error: any Error) -> PostgresIndexError {
        if let error = error as? PostgresIndexError { return error }
        if let error = error as? PSQLError, let message = error.serverInfo?[.message] {
            let state = error.serverInfo?[.sqlState]
            // Classes 08 (connection exception) and 57 (operator intervention: shutdown, crash, cancel).
            if let state, state.hasPrefix("08") || state.hasPrefix("57P") { return .connectionLost(reason: message) }
            return .server(message: message, sqlState: state)
        }
        if let error = error as? PSQLError,
           [.serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown].contains(error.code) {
            return .connectionLost(reason: reason(error))
        }
        return .server(message: reason(error), sqlState: nil)
    }

    /// What went wrong, in words: the server's message when there is one.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// The first row's single value, nil when there is no row or the value is NULL.
    func value<Value: PostgresDecodable>(_ sql: String, _ bindings: PostgresBindings = PostgresBindings(), as type: Value.Type) async throws(PostgresIndexError) -> Value? {
        try await Self.value(sql, bindings, on: connection, as: type)
    }

    static func value<Value: PostgresDecodable>(_ sql: String, _ bindings: PostgresBindings = PostgresBindings(), on connection: PostgresConnection,
                                                as: Value.Type) async throws(PostgresIndexError) -> Value? {
        guard let row = try await rows(sql, bindings, on: connection).first else { return nil }
        let cell = row.makeRandomAccess()[0]
        guard cell.bytes != nil else { return nil }
        do { return try cell.decode(Value.self) } catch { throw .server(message: "unexpected column values: \(error)", sqlState: nil) }
    }

    /// Decodes a row, reporting a mismatch as a server error (a damaged or foreign table).
    static func decode<each T: PostgresDecodable>(_ row: PostgresRow, as: (repeat each T).Type) throws(PostgresIndexError) -> (repeat each T) {
        do { return try row.decode((repeat each T).self) } catch { throw .server(message: "unexpected column values: \(error)", sqlState: nil) }
    }
}

extension PostgresBindings {
    /// Appends a value, or NULL.
    mutating func appendOptional<Value: PostgresNonThrowingEncodable & Sendable>(_ value: Value?) {
        if let value { append(value) } else { appendNull() }
    }
}
#endif
