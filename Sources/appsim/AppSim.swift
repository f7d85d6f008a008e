import ArgumentParser

/// `appsim`: acts like an app writing its Core Data store — builds one from the Corpus, then edits it.
@main
struct AppSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appsim",
        abstract: "Play an app on a Core Data store: build it from the Places Corpus, then edit it like a busy app.",
        subcommands: [CorpusCommand.self, EditCommand.self])
}
