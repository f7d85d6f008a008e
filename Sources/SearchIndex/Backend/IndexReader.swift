/// What every index backend answers: searches, dumps, statistics and checkpoints.
///
/// An SQLite index file (``SearchIndex``) and a PostgreSQL database (`PostgresIndex`, in the
/// `PostgresIndex` module) answer the same requests with the same hits; a command line or an app reads
/// through this protocol and never needs to know which one it has. Calls block the calling thread.
public protocol IndexReader: AnyObject, Sendable {
    /// Where the index is, as messages name it: a file path, or a URL without its password.
    var location: String { get }

    /// Runs a search: the hits, best first, and how they were found.
    func search(_ request: SearchRequest) throws(SearchIndexError) -> SearchResults

    /// Runs a search and reports how it ran: the statements, with the database's plan for each.
    func explain(_ request: SearchRequest) throws(SearchIndexError) -> SearchExplanation

    /// Streams every item exactly as indexed, ordered by URI, optionally of some entities (and, unless
    /// `exactEntities`, their sub-entities).
    func dump(entities: [String], exactEntities: Bool, _ body: (IndexedItem) throws -> Void) throws(SearchIndexError)

    /// Items per entity, located items, size, schema and checkpoints.
    func statistics() throws(SearchIndexError) -> IndexStatistics

    /// Every store's checkpoint, by UUID.
    func checkpoints() throws(SearchIndexError) -> [StoreCheckpoint]

    /// Every entity a request's entity filter may name: those with items, and their ancestors.
    func filterableEntityNames() throws(SearchIndexError) -> [String]
}

extension SearchIndex: IndexReader {}
