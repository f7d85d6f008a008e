import CoreDataStore
import Foundation
@testable import Indexer
import Testing

/// Inputs the fuzz targets (`scripts/fuzz`) found, minimized and inlined, each pinned by a test.
@Suite("Fuzz regressions: configuration")
struct ConfigurationFuzzRegressionTests {
    /// `scripts/fuzz config` invariant (`--print-config` prints what `--config` reads): an expression holding a tab
    /// or another control character is printed raw inside a JSON string, which JSON forbids, so the printed
    /// configuration does not load again ("configuration is not a JSON object").
    @Test("the printed configuration loads again when an expression holds a control character",
          arguments: [
        #"{"entities":{"Place":{"displayName":"lowercase:(\tname)"}}}"#,
        #"{"entities":{"Place":{"displayName":"'a\u0001b'"}}}"#,
    ])
    func printedConfigurationLoads(json: String) throws {
        let model = try ExpressionTests.model()
        let resolved = try ResolvedConfiguration(IndexConfiguration(json: Data(json.utf8)), model: model)
        let reloaded = try ResolvedConfiguration(IndexConfiguration(json: Data(resolved.effective.json.utf8)), model: model)
        #expect(reloaded.digest == resolved.digest)
    }
}
