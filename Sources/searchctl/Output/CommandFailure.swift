import ArgumentParser
import CoreDataStore
import Foundation
import Indexer
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
    let reason = errno != 0 ? String(cString: strerror(errno)) : "write error"
    printError("cannot write the output: \(reason)")
    exit(ExitStatus.ioError.rawValue)
}

/// Prints `searchctl: error: …` on stderr (the word `error:` in red on a terminal that welcomes colour).
func printError(_ message: String) {
    let label = Terminal.usesColor(STDERR_FILENO) ? "\u{1B}[1;31merror:\u{1B}[0m" : "error:"
    FileHandle.standardError.write(Data("searchctl: \(label) \(message)\n".utf8))
}

/// Prints a note on stderr (not an error: the command goes on).
func printNote(_ message: String) {
    let label = Terminal.usesColor(STDERR_FILENO) ? "\u{1B}[1;36mnote:\u{1B}[0m" : "note:"
    FileHandle.standardError.write(Data("searchctl: \(label) \(message)\n".utf8))
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
        case .invalidQuery, .invalidLocation, .searchTooExpensive: .usage
        case .busy: .temporaryFailure
        case .database: .software
        default: .dataError
        }
    }
}

/// Reports an error the way every command does and turns it into the process's exit code.
func fail(_ error: any Error) -> ExitCode {
    if let error = error as? CoreDataStoreError {
        printError(error.description)
        return ExitCode(error.exitStatus.rawValue)
    }
    if let error = error as? SearchIndexError {
        printError(error.description)
        return ExitCode(error.exitStatus.rawValue)
    }
    if let error = error as? ExportError {
        printError(error.description)
        switch error {
        case .store(let inner): return ExitCode(inner.exitStatus.rawValue)
        case .index(let inner): return ExitCode(inner.exitStatus.rawValue)
        case .lock: return ExitCode(ExitStatus.temporaryFailure.rawValue)
        case .unsafeFile: return ExitCode(ExitStatus.dataError.rawValue)
        case .configuration, .historyNotTracked: return ExitCode(ExitStatus.dataError.rawValue)
        case .internalFailure: return ExitCode(ExitStatus.software.rawValue)
        }
    }
    if let exit = error as? ExitCode { return exit }
    if let error = error as? ValidationError { printError(error.message); return ExitCode(ExitStatus.usage.rawValue) }
    printError("unexpected failure: \(error)")
    return ExitCode(ExitStatus.software.rawValue)
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
