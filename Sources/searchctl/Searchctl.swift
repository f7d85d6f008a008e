import ArgumentParser
import Foundation

/// `searchctl`: query Searchlight's index and read Core Data stores from a terminal or a script.
@main
struct Searchctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "searchctl",
        abstract: "Full-text and spatial search for Core Data stores.",
        discussion: """
            Exit status: 0 success, 1 nothing found, 64 usage error, 65 bad input data, 66 missing file, \
            70 internal error, 73 cannot create the index, 74 output could not be written, 75 temporary failure (locked or busy).

            Shell completion: searchctl --generate-completion-script bash|zsh|fish

            Examples:
              searchctl index --store Places.sqlite --config places.json
              searchctl search 横浜 --store Places.sqlite
              searchctl search tokyo --store Places.sqlite --limit 1 |
                searchctl resolve --store Places.sqlite -
            """,
        version: "searchctl \(searchlightVersion)",
        subcommands: [IndexCommand.self, SearchCommand.self, SavedCommand.self, ExplainCommand.self, DumpCommand.self, StatusCommand.self,
                      ModelCommand.self, HistoryCommand.self, ResolveCommand.self])

    /// Options that take one value: given twice, the parser would silently keep the last one, and a
    /// script that meant both (two stores, two formats) would get an answer to half its question.
    static let singleValueOptions: Set<String> = [
        "--store", "--index", "--model", "--config", "--format", "--near", "--radius", "--bbox", "--sort", "--limit",
        "--offset", "--after", "--batch-size", "--where",
    ]

    /// The first single-value option given more than once, if any (arguments after `--` are not options).
    /// `index` reads several stores: its `--store` may repeat.
    static func repeatedOption(in arguments: some Sequence<String>) -> String? {
        var seen: Set<String> = []
        let arguments = Array(arguments)
        let repeatable: Set<String> = arguments.first == IndexCommand.configuration.commandName ? ["--store"] : []
        for argument in arguments {
            if argument == "--" { break }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard singleValueOptions.contains(name), !repeatable.contains(name) else { continue }
            if !seen.insert(name).inserted { return name }
        }
        return nil
    }

    /// The position (1-based) of the first argument that is not valid UTF-8, if any. Swift repairs such
    /// bytes into U+FFFD before the parser sees them, so a query would silently search for something else
    /// and a path would name another file: refused instead, from the raw bytes.
    static func firstInvalidArgument() -> Int? {
        (1..<Int(CommandLine.argc)).first { position in
            CommandLine.unsafeArgv[position].map { String(validatingCString: $0) == nil } ?? false
        }
    }

    /// Runs the command line; usage errors become one `searchctl: error:` line like every other error.
    static func main() async {
        if let position = firstInvalidArgument() {
            printError("argument \(position) is not valid UTF-8; searchctl reads queries, paths and values as UTF-8 text (check the terminal's or the script's encoding)")
            Foundation.exit(ExitStatus.usage.rawValue)
        }
        if let repeated = repeatedOption(in: CommandLine.arguments.dropFirst()) {
            let why = ["--store", "--index"].contains(repeated) ? "one command reads one store and one index" : "a second value would silently replace the first"
            printError("\(repeated) was given more than once; give it once (\(why))")
            Foundation.exit(ExitStatus.usage.rawValue)
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand { try await command.run() } else { try command.run() }
            requireOutputWritten()
        } catch {
            // Even "nothing found" (exit 1) after partial output must not hide a failed write.
            requireOutputWritten()
            exit(with: error)
        }
    }

    private static func exit(with error: any Error) -> Never {
        // Help, completion scripts and our own exit codes keep the parser's handling; only usage errors
        // (the parser prints them as several lines with the whole usage) are reworded.
        guard exitCode(for: error).rawValue == ExitStatus.usage.rawValue, !(error is ExitCode) else { Self.exit(withError: error) }
        var message = message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid usage"
        if let first = message.first, first.isUppercase, message.dropFirst().first?.isLowercase == true {
            message = first.lowercased() + message.dropFirst()
        }
        let arguments = CommandLine.arguments.dropFirst()
        let subcommand = configuration.subcommands.map { $0.configuration.commandName ?? "" }.first { arguments.contains($0) }
        var hint = "see 'searchctl\(subcommand.map { " " + $0 } ?? "") --help'"
        // `berln -germany`: a word to leave out, which the parser took for an option.
        if let subcommand, ["search", "explain"].contains(subcommand),
           let word = arguments.first(where: { $0.count > 2 && $0.hasPrefix("-") && !$0.hasPrefix("--") && message.contains("'\($0)'") }) {
            hint = "to leave '\(word.dropFirst())' out of the hits, put the query after --: searchctl \(subcommand) [options] -- … \(word)"
        }
        printError(message + "; " + hint, code: .usage)
        Foundation.exit(ExitStatus.usage.rawValue)
    }
}
