import GRDB

extension SearchIndex {
    /// Runs a search without blocking the caller: the read waits for a connection and runs on it without
    /// holding a thread of Swift's cooperative pool, and a cancelled task interrupts it. On a read-only
    /// index, concurrent searches run in parallel, each on a connection and in a snapshot of its own.
    public func search(_ request: SearchRequest) async throws(SearchIndexError) -> SearchResults {
        let parsed = try Self.validate(request)
        return try await read { db in try Self.search(request, parsed: parsed, itemSets: self.filterItemSets, db: db) }
    }

    /// Counts every match of a request, as the async search runs.
    public func count(_ request: SearchRequest) async throws(SearchIndexError) -> Int {
        let parsed = try Self.validate(request.unpaged)
        return try await read { db in try Self.count(request, parsed: parsed, db: db) }
    }

    /// Every item exactly as indexed, ordered by URI, as the async search runs.
    public func dump(entities: [String] = [], exactEntities: Bool = false) async throws(SearchIndexError) -> [IndexedItem] {
        try await read { db in
            var items: [IndexedItem] = []
            try Self.dump(entities: entities, exactEntities: exactEntities, db: db) { items.append($0) }
            return items
        }
    }

    /// How a request would be searched, as the async search runs.
    public func explain(_ request: SearchRequest) async throws(SearchIndexError) -> SearchExplanation {
        let parsed = try Self.validate(request)
        return try await read { db in try Self.explain(request, parsed: parsed, itemSets: self.filterItemSets, db: db) }
    }
}
