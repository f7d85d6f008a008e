import Dispatch

extension SearchIndex {
    /// Runs a search off the caller's thread: SQLite blocks, so the work goes to a dispatch queue, never to
    /// Swift's cooperative pool. On a read-only index, concurrent searches run in parallel, each on a
    /// connection and in a snapshot of its own.
    public func search(_ request: SearchRequest) async throws(SearchIndexError) -> SearchResults {
        try await offThread { index throws(SearchIndexError) in try index.search(request) }
    }

    /// Counts every match of a request, off the caller's thread, as the async search runs.
    public func count(_ request: SearchRequest) async throws(SearchIndexError) -> Int {
        try await offThread { index throws(SearchIndexError) in try index.count(request) }
    }

    /// Every item exactly as indexed, ordered by URI, off the caller's thread.
    public func dump(entities: [String] = [], exactEntities: Bool = false) async throws(SearchIndexError) -> [IndexedItem] {
        try await offThread { index throws(SearchIndexError) in try index.dump(entities: entities, exactEntities: exactEntities) }
    }

    /// How a request would be searched, off the caller's thread.
    public func explain(_ request: SearchRequest) async throws(SearchIndexError) -> SearchExplanation {
        try await offThread { index throws(SearchIndexError) in try index.explain(request) }
    }

    /// Runs `body` on a global dispatch queue and resumes the caller with its result.
    private func offThread<T: Sendable>(_ body: @escaping @Sendable (SearchIndex) throws(SearchIndexError) -> T) async throws(SearchIndexError) -> T {
        let result: Result<T, SearchIndexError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do throws(SearchIndexError) { continuation.resume(returning: .success(try body(self))) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
