import Foundation
import TestScratch

/// Runs the built `searchctl` binary the way a person or a script would.
enum CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether the process died of a signal (`status` is then the signal's number).
        var signaled = false
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    static let projectRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let stores = projectRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/coredata-stores")
    static let fixturesAvailable = FileManager.default.fileExists(atPath: stores.appendingPathComponent("SampleModel2_V1.sqlite").path)
    static let skipMessage = "../shared/fixtures is absent: the Apple-written stores are not available"

    /// The binary sits beside the test bundle in the build products folder.
    static let executable: URL = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("searchctl")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return projectRoot.appendingPathComponent(".build/debug/searchctl")
    }()

    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Result {
        try runProgram(executable.path, arguments, stdin: stdin, environment: environment)
    }

    /// Runs any program (e.g. `script` to give searchctl a terminal) and collects its output.
    static func runProgram(_ path: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let output = Pipe(), errors = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read before waiting so a large output cannot fill the pipe and stall the child.
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self),
                      signaled: process.terminationReason == .uncaughtSignal)
    }

    static func copyStore(_ name: String) throws -> String {
        let directory = Scratch.folder.appendingPathComponent("searchctl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let target = directory.appendingPathComponent("\(name).sqlite")
        try FileManager.default.copyItem(at: stores.appendingPathComponent("\(name).sqlite"), to: target)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        return target.path
    }

    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }
}
