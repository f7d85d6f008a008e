import Foundation
import SearchIndex

extension IndexReader {
    /// The saved searches of the configurations the index was built with (every store's), by name;
    /// where two stores declare one name, the first store (by UUID) wins.
    public func savedSearches() throws(SearchIndexError) -> [String: SavedSearch] {
        var searches: [String: SavedSearch] = [:]
        for checkpoint in try checkpoints().sorted(by: { $0.storeUUID < $1.storeUUID }) {
            guard let json = checkpoint.configuration else { continue }
            // The index wrote it: one it cannot read back is damage, not an index without saved searches.
            let configuration: IndexConfiguration
            do {
                configuration = try IndexConfiguration(json: Data(json.utf8), path: "the stored configuration of store \(checkpoint.storeUUID)")
            } catch {
                throw .notAnIndex(path: location, detail: "it is damaged: \(error.description)")
            }
            searches.merge(configuration.searches) { first, _ in first }
        }
        return searches
    }

    /// One saved search, or an error naming the ones there are.
    public func savedSearch(named name: String) throws(SearchIndexError) -> SavedSearch {
        let searches = try savedSearches()
        guard let search = searches[name] else {
            throw .invalidRequest(.unknownSavedSearch(name: name, known: searches.keys.sorted()))
        }
        return search
    }
}
