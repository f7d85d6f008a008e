import ArgumentParser
import CoreDataStore
import Foundation

/// `searchctl resolve`: deep-link resolution, URI in, object out.
struct ResolveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Look object-ID URIs up in the store and print the objects.",
        discussion: """
            Each URI (x-coredata://<store-uuid>/<Entity>/p<pk>) is resolved in the source store. Pass - to read \
            URIs from standard input, one per line. Exit status 1 when an object is missing, 65 when a URI is \
            malformed, temporary or of another store.

            Examples:
              searchctl resolve --store Places.sqlite x-coredata://C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A/Book/p1
              searchctl search tokyo --store Places.sqlite | searchctl resolve --store Places.sqlite -
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, jsonl, table
    }

    @Argument(help: ArgumentHelp("Object-ID URIs, or - to read them from standard input.", valueName: "uri"))
    var uris: [String]

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "Output format: json (an array), jsonl or table.")
    var format: Format = .json

    func validate() throws {
        if uris.isEmpty { throw ValidationError("give at least one URI, or - to read URIs from standard input") }
    }

    func run() throws {
        do {
            let store = try storeOptions.open()
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
            var malformed = false
            var missing = false
            var parsed: [(uri: String, id: ManagedObjectID?)] = []
            for uri in inputs {
                do {
                    let id = try ManagedObjectID(uriRepresentation: uri)
                    try store.validate(id)
                    parsed.append((uri, store.canonical(id)))
                } catch {
                    printError(error.description)
                    malformed = true
                    parsed.append((uri, nil))
                }
            }
            // One bulk read for every URI: one snapshot, one query per table.
            let found = try store.objects(parsed.compactMap(\.id))
            var objects: [ManagedObjectSnapshot] = []
            for (uri, id) in parsed {
                guard let id else { continue }
                if let snapshot = found[id] {
                    objects.append(snapshot)
                } else {
                    printError("no object \(uri) in \(store.path); it was deleted or never saved")
                    missing = true
                }
            }
            switch format {
            case .json: print(JSONValue.array(objects.map(\.json)).pretty)
            case .jsonl: objects.forEach { print($0.json.compact) }
            case .table: print(objects.map(Self.table).joined(separator: "\n\n"))
            }
            if malformed { throw ExitCode(ExitStatus.dataError.rawValue) }
            if missing { throw ExitCode(ExitStatus.notFound.rawValue) }
        } catch {
            throw fail(error)
        }
    }

    private static func table(_ object: ManagedObjectSnapshot) -> String {
        var table = TextTable(headers: ["PROPERTY", "VALUE"])
        table.rows.append(["(uri)", object.objectID.uriRepresentation])
        for (name, value) in object.attributes.sorted(by: { $0.key < $1.key }) { table.rows.append([name, value.text]) }
        for (name, id) in object.toOne.sorted(by: { $0.key < $1.key }) { table.rows.append([name, id.uriRepresentation]) }
        for (name, ids) in object.toMany.sorted(by: { $0.key < $1.key }) {
            table.rows.append([name, ids.isEmpty ? "(none)" : "\(ids.count): " + ids.prefix(5).map(\.uriRepresentation).joined(separator: " ") + (ids.count > 5 ? " …" : "")])
        }
        return table.render()
    }
}
