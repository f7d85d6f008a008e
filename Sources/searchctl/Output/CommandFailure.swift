import ArgumentParser
import CoreDataStore
import Foundation
import Indexer
import PostgresIndex
import SearchIndex

/// Exit codes of `searchctl`, from sysexits.
enum ExitStatus: Int32 {
    case success = 0
    case notFound = 1
    case usage = 64
    case dataError = 65
    case noInput = 66
    case software = 70
    case cannotCreate = 73
    case ioError = 74
    case temporaryFailure = 75
}

/// Exits 74 with one line when standard output could not be written (a full disk, `> /dev/full`, a
/// closed pipe): a script must never take a cut-off answer for a whole one.
func requireOutputWritten() {
    errno = 0
    // fflush(NULL) flushes every stream and reports a failed write of any: glibc keeps unwritten bytes
    // buffered after an error, so an earlier failed flush fails again here.
    guard fflush(nil) != 0 else { return }
    exitOutputFailed(errno: errno)
}

/// Exits 74 with one line naming why the output could not be written.
func exitOutputFailed(errno code: Int32) -> Never {
    let reason = code != 0 ? String(cString: strerror(code)) : "write error"
    printError("cannot write the output: \(reason)", code: .ioError)
    exit(ExitStatus.ioError.rawValue)
}

/// Prints `searchctl: error: …` on stderr (the word `error:` in red on a terminal that welcomes colour),
/// or, when the command was asked for JSON, `{"error": {"code": N, "message": "…"}}` on one line: a script
/// parsing the output parses the failure too.
func printError(_ message: String, code: ExitStatus = .usage) {
    let line: String
    if errorsAsJSON {
        line = JSONValue.object([("error", .object([("code", .int(Int64(code.rawValue))), ("message", .string(message))]))]).compact
    } else {
        let label = Terminal.usesColor(STDERR_FILENO) ? "\u{1B}[1;31merror:\u{1B}[0m" : "error:"
        line = "searchctl: \(label) \(message)"
    }
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Whether this run asked for `--format json` or `jsonl` (before any `--`).
var errorsAsJSON: Bool {
    let arguments = Array(CommandLine.arguments.dropFirst().prefix { $0 != "--" })
    for (position, argument) in arguments.enumerated() {
        if argument.hasPrefix("--format=") { return ["json", "jsonl"].contains(argument.dropFirst("--format=".count)) }
        if argument == "--format", position + 1 < arguments.count { return ["json", "jsonl"].contains(arguments[position + 1]) }
    }
    return false
}

/// Prints `searchctl: note: …` on stderr, or `{"note": {"message": "…"}}` when the command was asked for
/// JSON, so every stderr line of a JSON run parses.
func printNote(_ message: String) {
    let line: String
    if errorsAsJSON {
        line = JSONValue.object([("note", .object([("message", .string(message))]))]).compact
    } else {
        let label = Terminal.usesColor(STDERR_FILENO) ? "\u{1B}[1;36mnote:\u{1B}[0m" : "note:"
        line = "searchctl: \(label) \(message)"
    }
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

extension CoreDataStoreError {
    /// The exit status for this error.
    var exitStatus: ExitStatus {
        switch self {
        case .fileNotFound: .noInput
        case .busy: .temporaryFailure
        case .database: .software
        default: .dataError
        }
    }
}

extension SearchIndexError {
    /// The exit status for this error.
    var exitStatus: ExitStatus {
        switch self {
        case .indexNotFound: .noInput
        case .folderNotFound: .cannotCreate
        case .invalidQuery, .invalidRequest, .invalidPredicate, .invalidLocation, .searchTooExpensive, .unsupported: .usage
        case .busy, .cancelled: .temporaryFailure
        case .backend(_, let isTemporary): isTemporary ? .temporaryFailure : .software
        case .database: .software
        default: .dataError
        }
    }
}

/// Reports an error the way every command does and turns it into the process's exit code.
func fail(_ error: any Error) -> ExitCode {
    if let exit = error as? ExitCode { return exit }
    let (message, status) = describe(error)
    printError(message, code: status)
    return ExitCode(status.rawValue)
}

/// What to tell the person about an error, and the exit status it means.
func describe(_ error: any Error) -> (message: String, status: ExitStatus) {
    switch error {
    case let error as CoreDataStoreError: return (error.commandLineMessage, error.exitStatus)
    case let error as SearchIndexError: return (error.commandLineMessage, error.exitStatus)
    case let error as ExportError:
        let status: ExitStatus = switch error {
        case .store(let inner): inner.exitStatus
        case .index(let inner): inner.exitStatus
        case .lock, .alreadyRunning: .temporaryFailure
        case .unsafeFile, .indexIsStore, .configuration, .historyNotTracked, .duplicateStore, .unknownStore: .dataError
        case .storeGivenTwice: .usage
        case .stopped: .temporaryFailure
        case .internalFailure: .software
        }
        return (error.commandLineMessage, status)
    case let error as PostgresIndexError:
        let status: ExitStatus = switch error {
        case .invalidLocation, .notBuilt, .unsupported, .refused, .notUTF8: .usage
        case .unreachable, .connectionLost, .writerActive, .checkpointMoved: .temporaryFailure
        case .notAnIndex: .noInput
        case .schemaTooNew, .schemaTooOld: .dataError
        case .server, .misuse: .software
        case .search(let inner): inner.exitStatus
        }
        return (error.description, status)
    case let error as ValidationError: return (error.message, .usage)
    case let error as IndexNotBuilt: return (error.message, .noInput)
    default: return ("unexpected failure: \(error)", .software)
    }
}

extension DeepLinkResolver.Problem {
    /// The exit status for a URI that could not be looked up.
    var exitStatus: ExitStatus {
        switch self {
        case .invalidURI, .unknownStore, .storeReplaced: .dataError
        case .storeUnavailable(_, let error): error.exitStatus
        }
    }
}
