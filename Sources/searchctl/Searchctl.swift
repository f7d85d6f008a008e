import ArgumentParser

/// `searchctl`: query Searchlight's index and read Core Data stores from a terminal or a script.
@main
struct Searchctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "searchctl",
        abstract: "Full-text and spatial search for Core Data stores.",
        discussion: """
            Exit status: 0 success, 1 nothing found, 64 usage error, 65 bad input data, 66 missing file, \
            70 internal error, 75 temporary failure (locked or busy).
            """,
        subcommands: [IndexCommand.self, SearchCommand.self, DumpCommand.self, StatusCommand.self, ModelCommand.self, HistoryCommand.self, ResolveCommand.self])
}
