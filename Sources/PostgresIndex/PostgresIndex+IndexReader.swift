#if PostgreSQL
import Dispatch
import PostgresNIO
import SearchIndex
import Synchronization

/// The index as a command line reads it: every call blocks the calling thread (never one of Swift's
/// cooperative pool) until the server has answered.
extension PostgresIndex: IndexReader {
    /// Where the index is, without its password.
    public var location: String { postgresLocation.description }

    public func search(_ request: SearchRequest) throws(SearchIndexError) -> SearchResults {
        try Self.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.search(request) }
    }

    public func explain(_ request: SearchRequest) throws(SearchIndexError) -> SearchExplanation {
        try Self.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.explain(request) }
    }

    public func dump(entities: [String], exactEntities: Bool, _ body: (IndexedItem) throws -> Void) throws(SearchIndexError) {
        let items = try Self.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.dump(entities: entities, exactEntities: exactEntities) }
        do { for item in items { try body(item) } } catch {
            if let error = error as? SearchIndexError { throw error }
            throw .backend(message: "\(error)", isTemporary: false)
        }
    }

    public func statistics() throws(SearchIndexError) -> IndexStatistics {
        try Self.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.statistics() }
    }

    public func checkpoints() throws(SearchIndexError) -> [StoreCheckpoint] {
        try Self.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.checkpoints() }
    }

    public func filterableEntityNames() throws(SearchIndexError) -> [String] {
        try Self.blocking(watching: connection) { () async throws(PostgresIndexError) in try await self.filterableEntityNames() }
    }

    /// Where the tasks of blocking calls run: a thread of their own, never Swift's cooperative pool, whose
    /// threads the blocked callers may be (an async command calling a synchronous API): a pool of one
    /// thread would otherwise wait for itself.
    static let bridge = ThreadExecutor.lasting(named: "searchlight postgres")

    /// Runs `body`, whose statements go to `connection`, to completion while the calling thread waits.
    static func blocking<Value: Sendable>(watching connection: PostgresConnection,
                                          _ body: @escaping @Sendable () async throws(PostgresIndexError) -> Value) throws(SearchIndexError) -> Value {
        do { return try waiting(watching: connection, body).get() } catch { throw error.indexError }
    }

    /// Runs `body` to completion on a task of its own while the calling thread waits; returns its result.
    ///
    /// A statement whose connection the server closed under it (a crash, an immediate shutdown) was seen
    /// to wait forever in postgres-nio instead of failing: the wait watches the connections `body` uses,
    /// and gives up with ``PostgresIndexError/connectionLost(reason:)`` once it has closed. Only that
    /// connection: a task given up on may still be running, and nothing may be sent on the connection it
    /// uses (a ROLLBACK would land between its statements); a closed one takes nothing more.
    static func waiting<Value: Sendable>(watching connection: PostgresConnection?,
                                         _ body: @escaping @Sendable () async throws(PostgresIndexError) -> Value) -> Result<Value, PostgresIndexError> {
        let outcome = Outcome<Value>()
        let done = DispatchSemaphore(value: 0)
        Task.detached(executorPreference: bridge) {
            let result: Result<Value, PostgresIndexError>
            do throws(PostgresIndexError) { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.result.withLock { $0 = result }
            done.signal()
        }
        while done.wait(timeout: .now() + .milliseconds(250)) == .timedOut {
            guard connection?.isClosed == true else { continue }
            // The statement's own error, when it comes, says more.
            if done.wait(timeout: .now() + .seconds(1)) == .success { break }
            return .failure(.connectionLost(reason: "the server closed the connection"))
        }
        return outcome.result.withLock { $0 } ?? .failure(.server(message: "a PostgreSQL call ended without an answer", sqlState: nil))
    }

    /// Where a blocked call's task leaves its result.
    private final class Outcome<Value: Sendable>: Sendable {
        let result = Mutex<Result<Value, PostgresIndexError>?>(nil)
    }
}
#endif
