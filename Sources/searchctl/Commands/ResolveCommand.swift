import ArgumentParser
import CoreDataStore
import Foundation
import Indexer
import SearchIndex

/// `searchctl resolve`: deep-link resolution, URI in, object out.
struct ResolveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Look object-ID URIs up in the store and print the objects.",
        discussion: """
            Each URI (x-coredata://<store-uuid>/<Entity>/p<pk>) is resolved in the source store: the one given \
            with --store, or the one the index recorded for that store UUID (--index, or $SEARCHCTL_INDEX; one \
            index may hold several stores). Pass - to read URIs from standard input, one per line. Exit status 1 \
            when an object is missing, 65 when a URI is malformed, temporary or of an unknown store, 66 when a \
            recorded store is gone.

            Examples:
              searchctl resolve --store App.sqlite \\
                x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/Book/p1
              searchctl search tokyo --store Places.sqlite |
                searchctl resolve --store Places.sqlite -
              searchctl search tokyo --index all.searchindex |
                searchctl resolve --index all.searchindex -
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, jsonl, table
    }

    @Argument(help: ArgumentHelp("Object-ID URIs, or - to read them from standard input.", valueName: "uri"))
    var uris: [String] = []

    @Option(help: ArgumentHelp("The Core Data store to resolve in; opened read-only.", valueName: "path"))
    var store: String?

    @Option(help: ArgumentHelp("An index (file or postgres://…) whose recorded stores to resolve in (default: $SEARCHCTL_INDEX).", valueName: "path"))
    var index: String?

    @Option(help: ArgumentHelp(
        "A model to read the store with instead of its own Z_MODELCACHE: a .xcdatamodeld bundle, a .xcdatamodel folder or its contents file.",
        valueName: "path"))
    var model: String?

    @Option(help: "Output format: json (an array), jsonl or table.")
    var format: Format = .json

    func validate() throws {
        if uris.isEmpty { throw ValidationError("give at least one URI, or - to read URIs from standard input") }
        if store != nil && index != nil { throw ValidationError("give --store or --index, not both") }
    }

    func run() throws {
        do {
            let resolver: DeepLinkResolver
            if let store {
                let opened = try PersistentStore(path: store, modelPath: model)
                for note in opened.notes { printNote(IndexReporter.describe(.store(path: store, note))) }
                resolver = DeepLinkResolver(store: opened)
            } else {
                guard let path = index ?? IndexLocation.environmentIndex else {
                    throw ValidationError("say where the objects are: --store PATH (the app's store), --index PATH (the stores it records) or SEARCHCTL_INDEX")
                }
                resolver = try DeepLinkResolver(index: try IndexLocation.open(path), modelPath: model)
            }
            var inputs: [String] = []
            for argument in uris {
                if argument == "-" {
                    while let line = readLine() {
                        let trimmed = line.trimmingCharacters(in: .whitespaces)
                        if !trimmed.isEmpty { inputs.append(trimmed) }
                    }
                } else {
                    inputs.append(argument)
                }
            }
            let resolutions = try resolver.resolve(inputs)
            for note in resolver.notes { printNote(IndexReporter.describe(.store(path: "", note))) }
            var objects: [ManagedObjectSnapshot] = []
            // In input order: each object, or the URI with why it could not be read, so a script reading the
            // output sees every URI it asked about.
            var entries: [JSONValue] = []
            var worst = ExitStatus.success
            for resolution in resolutions {
                switch resolution {
                case .found(let object):
                    objects.append(object)
                    entries.append(object.json)
                case .missing(let uri, let storePath):
                    let message = "no object \(uri) in \(storePath); it was deleted or never saved"
                    printError(message, code: .notFound)
                    entries.append(.object([("uri", .string(uri)), ("error", .string(message))]))
                    if worst == .success { worst = .notFound }
                case .failed(let uri, let problem):
                    printError(problem.commandLineMessage, code: problem.exitStatus)
                    entries.append(.object([("uri", .string(uri)), ("error", .string(problem.commandLineMessage))]))
                    worst = Self.moreSerious(worst, problem.exitStatus)
                }
            }
            switch format {
            case .json: print(JSONValue.array(entries).pretty)
            case .jsonl: entries.forEach { print($0.compact) }
            case .table: if !objects.isEmpty { print(objects.map(Self.table).joined(separator: "\n\n")) }
            }
            if worst != .success { throw ExitCode(worst.rawValue) }
        } catch {
            throw fail(error)
        }
    }

    /// A missing file outranks bad data, which outranks a missing object.
    private static func moreSerious(_ current: ExitStatus, _ other: ExitStatus) -> ExitStatus {
        let order: [ExitStatus] = [.success, .notFound, .dataError, .noInput]
        return (order.firstIndex(of: other) ?? 0) > (order.firstIndex(of: current) ?? 0) ? other : current
    }

    private static func table(_ object: ManagedObjectSnapshot) -> String {
        var table = TextTable(headers: ["PROPERTY", "VALUE"], shrinkable: [1])
        table.rows.append(["(uri)", object.objectID.uriRepresentation])
        for (name, value) in object.attributes.sorted(by: { $0.key < $1.key }) { table.rows.append([name, value.text]) }
        for (name, id) in object.toOne.sorted(by: { $0.key < $1.key }) { table.rows.append([name, id.uriRepresentation]) }
        for (name, ids) in object.toMany.sorted(by: { $0.key < $1.key }) {
            table.rows.append([name, ids.isEmpty ? "(none)" : "\(ids.count): " + ids.prefix(5).map(\.uriRepresentation).joined(separator: " ") + (ids.count > 5 ? " …" : "")])
        }
        return table.renderForStandardOutput()
    }
}
