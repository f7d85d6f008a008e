import ArgumentParser
import Foundation
import SearchIndex

/// `searchctl dump`: every item exactly as indexed.
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print every item exactly as indexed, ordered by URI.",
        discussion: "Example:\n  searchctl dump --store Places.sqlite --entity Country")

    enum Format: String, ExpressibleByArgument, CaseIterable { case jsonl, table }

    @OptionGroup var location: IndexLocation

    @Option(name: .customLong("entity"), help: "Only this entity (repeatable).")
    var entities: [String] = []

    @Flag(help: "--entity matches exactly that entity, not its sub-entities.")
    var exactEntity = false

    @Option(help: "jsonl or table.")
    var format: Format = .jsonl

    func run() throws {
        do {
            var table = TextTable(headers: ["URI", "ENTITY", "NAME", "LATITUDE", "LONGITUDE"], shrinkable: [2])
            let index = try location.open()
            var count = 0
            try index.dump(entities: entities, exactEntities: exactEntity) { item in
                count += 1
                switch format {
                case .jsonl:
                    // Every key on every line (null when absent), the same shape as search hits.
                    let members: [(String, JSONValue)] = [
                        ("uri", .string(item.uri)), ("entity", .string(item.entity)), ("displayName", .string(item.displayName)),
                        ("title", .string(item.title)), ("text", .array(item.text.map(JSONValue.string))),
                        ("keywords", .array(item.keywords.map(JSONValue.string))),
                        ("latitude", item.latitude.map(JSONValue.double) ?? .null), ("longitude", item.longitude.map(JSONValue.double) ?? .null),
                        ("date", item.date.map { .string($0.iso8601) } ?? .null), ("rank", .double(item.rank)),
                    ]
                    print(JSONValue.object(members).compact)
                case .table:
                    table.rows.append([item.uri, item.entity, item.displayName, item.latitude.map { String($0) } ?? "", item.longitude.map { String($0) } ?? ""])
                }
            }
            index.noteUnfinishedExports()
            if count == 0 { try index.checkEntities(entities) }
            if format == .table { print(table.renderForStandardOutput()) }
        } catch {
            throw fail(error)
        }
    }
}
