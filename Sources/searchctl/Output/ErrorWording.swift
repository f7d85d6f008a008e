import CoreDataStore
import Indexer
import SearchIndex

// The libraries' errors carry facts and describe them without knowing a command line; here they are told
// in searchctl's words, with the command or flag that fixes them.

extension CoreDataStoreError {
    /// The message for the person at the terminal.
    var commandLineMessage: String {
        switch self {
        case .notADatabase(let path, let detail):
            "\(path) is not an SQLite database (\(detail)); point --store at an app's Core Data .sqlite file"
        case .notACoreDataStore:
            description + "; point --store at an app's Core Data .sqlite file"
        case .modelMismatch(let differences):
            "the model does not match the store: " + differences.joined(separator: "; ")
                + "; pass the model version the store was written with, or omit --model to use the store's own"
        case .unknownEntity:
            description + "; searchctl model --store <store> lists its entities"
        case .unknownProperty:
            description + "; searchctl model --store <store> --format text lists its properties"
        case .database:
            description + " with the command you ran"
        default:
            description
        }
    }
}

extension SearchIndexError {
    /// The message for the person at the terminal.
    var commandLineMessage: String {
        switch self {
        case .indexNotFound(let path):
            "no index at \(path); build one with: searchctl index --store <store.sqlite> --index \(path)"
        case .notAnIndex(let path, let detail) where detail.contains("damaged"):
            "\(path) is damaged (\(detail.replacingOccurrences(of: "it is damaged: ", with: ""))); rebuild it: remove it and run searchctl index"
        case .notAnIndex:
            description + "; point --index at an index, or move the file aside and run searchctl index to build one"
        case .unsafeFile, .folderNotFound:
            description + "; " + (isFolderNotFound ? "create it" : "remove it") + " or choose another --index"
        case .indexReplaced:
            description + ": run searchctl index again to build it"
        case .needsUpgrade(let path):
            "\(path) was written by an older Searchlight; run searchctl index on its store once to upgrade it"
        case .newerSchema(let path, let version):
            "\(path) has schema version \(version), newer than this searchctl understands; upgrade Searchlight"
        case .invalidRequest(let problem):
            "invalid query: " + problem.commandLineMessage
        case .invalidPredicate(let reason, let position):
            "invalid --where at character \(position): " + reason.replacingOccurrences(of: "in the configuration and index again",
                                                                                    with: "in a configuration file and run searchctl index --config FILE")
        case .database:
            description + " with the command you ran"
        default:
            description
        }
    }

    private var isFolderNotFound: Bool { if case .folderNotFound = self { true } else { false } }
}

extension SearchRequest.Problem {
    /// The problem in terms of `search`'s options.
    var commandLineMessage: String {
        switch self {
        case .nothingToSearch: "give words to search for, --near, --bbox or --where"
        case .radiusWithoutCenter: "--radius needs --near"
        case .limitBelowOne: "--limit must be at least 1"
        case .negativeOffset: "--offset must be 0 or more"
        case .unknownAttribute(let name, let use, let known):
            known.isEmpty
                ? "--\(use.rawValue) \(name): the index's configuration declares no attributes; add \"attributes\": {\"\(name)\": \"keyPath\"} "
                    + "to the entity in a configuration file and run searchctl index --config FILE"
                : "--\(use.rawValue) \(name): no item has that attribute; the index has \(known.joined(separator: ", "))"
        case .invalidSort(let text): "--sort takes relevance, distance or ATTRIBUTE[:asc|:desc] (population:desc); got '\(text)'"
        case .missingVariable(let search, let name, let variables):
            "the saved search '\(search)' needs $\(name): add --var \(name)=…"
                + (variables.count > 1 ? " (it takes " + variables.map { "$" + $0 }.joined(separator: ", ") + ")" : "")
        case .entityOutsideSavedSearch(let search, let entity, let entities):
            "the saved search '\(search)' searches \(entities.joined(separator: ", ")); --entity \(entity) is not one of them"
        case .unknownSavedSearch(let name, let known) where known.isEmpty:
            "no saved search '\(name)': the index's configuration declares none; add \"searches\": {\"\(name)\": {\"where\": \"…\"}} "
                + "to a configuration file and run searchctl index --config FILE"
        default: description
        }
    }
}

extension ExportError {
    /// The message for the person at the terminal.
    var commandLineMessage: String {
        switch self {
        case .store(let error): error.commandLineMessage
        case .index(let error): error.commandLineMessage
        case .lock(_, let holder, nil):
            "another indexer (pid \(holder.map(String.init) ?? "unknown"): a searchctl index, or an app's indexing service) is writing this index; wait for it or stop it"
        case .unsafeFile(let path, let reason):
            "refusing to write \(path): \(reason); remove it (it is not Searchlight's) and run again"
        case .indexIsStore(let index, let store):
            "\(index) is the store \(store) itself; choose another path for the index (--index)"
        case .duplicateStore(let uuid, let indexedPath, let path):
            "\(path) has the UUID \(uuid) of \(indexedPath), which this index already follows: it is a copy of that store; "
                + "index the copy into an index of its own (--index), or move the original away first"
        case .storeGivenTwice(let path, let other, true):
            "\(path) and \(other) are one store file; give it to --store once"
        case .storeGivenTwice(let path, let other, false):
            "\(path) is a copy of \(other) (the same store UUID); index the copy into an index of its own (--index)"
        case .historyNotTracked(let path):
            "\(path) has no persistent history, so --follow cannot see changes; turn on NSPersistentHistoryTrackingKey in the app's "
                + "store description (index without --follow re-exports everything each run)"
        case .internalFailure:
            description + " with the command you ran"
        default:
            description
        }
    }
}

extension DeepLinkResolver.Problem {
    /// The message for the person at the terminal.
    var commandLineMessage: String {
        switch self {
        case .invalidURI(let error): error.commandLineMessage
        case .storeUnavailable(let uuid, let error): "\(error.commandLineMessage) (the index records it as store \(uuid))"
        case .storeReplaced: description + "; run searchctl index on it, or resolve with --store PATH"
        case .unknownStore: description + "; resolve with --store PATH of that store"
        }
    }
}
