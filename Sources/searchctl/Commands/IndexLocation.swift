import ArgumentParser
import Foundation
import PostgresIndex
import SearchIndex

/// Where the index is: `--index`, else beside `--store` (extension replaced by `.searchindex`), else
/// `$SEARCHCTL_INDEX`; a file, or a database on PostgreSQL (`postgres://USER@HOST:PORT/DATABASE`).
struct IndexLocation: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The index file, or postgres://USER@HOST:PORT/DATABASE.", valueName: "path"))
    var index: String?

    @Option(name: .long, help: ArgumentHelp("The store whose default index (store.searchindex, beside it) to use.", valueName: "path"))
    var store: String?

    func validate() throws {
        if index != nil && store != nil {
            throw ValidationError("give --index or --store (its default index), not both")
        }
    }

    /// `$SEARCHCTL_INDEX`, when set and not empty: the index to use when no option names one.
    static var environmentIndex: String? {
        let value = ProcessInfo.processInfo.environment["SEARCHCTL_INDEX"] ?? ""
        return value.isEmpty ? nil : value
    }

    static func defaultIndex(forStore store: String) -> String {
        URL(fileURLWithPath: store).deletingPathExtension().appendingPathExtension("searchindex").path
    }

    func path() throws -> String { try Self.path(index: index, store: store) }

    /// The index `--index`/`--store`/`$SEARCHCTL_INDEX` name, in that order.
    static func path(index: String?, store: String?) throws -> String {
        if let index { return index }
        if let store { return Self.defaultIndex(forStore: store) }
        if let environment = environmentIndex { return environment }
        throw ValidationError("say which index: --index PATH, --store PATH (its default index) or SEARCHCTL_INDEX")
    }

    func open() throws -> any IndexReader {
        do {
            return try Self.open(path())
        } catch SearchIndexError.indexNotFound(let path) where store != nil {
            // The store was named: the command to build its index can name it too.
            throw IndexNotBuilt(store: store ?? "", index: path, environmentIndex: Self.environmentIndex)
        }
    }

    /// Opens the index file, or the PostgreSQL database the location names, for reading.
    static func open(_ location: String) throws -> any IndexReader {
        if PostgresLocation.isPostgres(location) { return try PostgresBackend.openReader(PostgresLocation(location)) }
        return try SearchIndex(path: location, mode: .readOnly)
    }
}

/// `--store` names a store whose default index was never built.
struct IndexNotBuilt: Error {
    var store: String
    var index: String
    /// `$SEARCHCTL_INDEX`, which `index --store` writes to and `--store` here does not read.
    var environmentIndex: String?

    var message: String {
        if let environmentIndex {
            return "no index at \(index) (--store names the store's own index); to search \(environmentIndex) (SEARCHCTL_INDEX), leave --store out"
        }
        return "no index at \(index) yet; build it with: searchctl index --store \(store)"
    }
}
