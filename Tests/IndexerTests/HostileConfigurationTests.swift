import CoreDataStore
import Foundation
@testable import Indexer
import Testing

/// Configurations nobody checked: nesting, length and non-regular files are refused with a position.
@Suite("Hostile configurations")
struct HostileConfigurationTests {
    func resolve(_ displayName: String) throws(ResolvedConfiguration.ResolutionError) -> ResolvedConfiguration {
        try ResolvedConfiguration(IndexConfiguration(entities: ["Place": .fields(.init(displayName: displayName))]), model: try! ExpressionTests.model())
    }

    @Test("nesting 100,000 deep, 500 deep, a 100,000-part key path: refused with the position, never a stack overflow",
          arguments: [String(repeating: "lowercase:(", count: 100_000) + "name" + String(repeating: ")", count: 100_000),
                      String(repeating: "lowercase:(", count: 500) + "name" + String(repeating: ")", count: 500),
                      String(repeating: "FUNCTION(", count: 200) + "name" + String(repeating: ", 'stringByAppendingString:', 'x')", count: 200),
                      Array(repeating: "country", count: 100_000).joined(separator: "."),
                      Array(repeating: "country", count: 40).joined(separator: ".") + ".name"])
    func nesting(expression: String) {
        do {
            _ = try resolve(expression)
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("at character"), "\(error.description.prefix(200))")
        }
    }

    @Test("an expression nested as deep as allowed still works")
    func allowedDepth() throws {
        let expression = String(repeating: "lowercase:(", count: ExpressionParser.maximumDepth) + "name" + String(repeating: ")", count: ExpressionParser.maximumDepth)
        _ = try resolve(expression)
    }

    @Test("a FIFO or a directory as the configuration file is refused at once", .timeLimit(.minutes(1)))
    func fifo() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let fifo = folder.appendingPathComponent("config.json").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: IndexConfiguration.LoadError.self) { try IndexConfiguration(contentsOf: fifo) }
        #expect(throws: IndexConfiguration.LoadError.self) { try IndexConfiguration(contentsOf: folder.path) }
        let deep = folder.appendingPathComponent("deep.json").path
        try Data(("{\"entities\": " + String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000) + "}").utf8)
            .write(to: URL(fileURLWithPath: deep))
        #expect(throws: IndexConfiguration.LoadError.self) { try IndexConfiguration(contentsOf: deep) }
    }
}
