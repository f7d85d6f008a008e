@testable import CoreDataStore
import Foundation
import GRDB
import Testing

/// Inputs the fuzz targets (`scripts/fuzz`) found, minimized and inlined, each pinned by a test.
@Suite("Fuzz regressions: model files, DEFLATE, history values")
struct FuzzRegressionTests {
    /// `scripts/fuzz modelxml`: bytes that are not UTF-8 in an element name (minimized: `<` FF 00 00 `>`), an
    /// attribute name or a comment. libxml2 recovers and hands them on; FoundationXML force-unwraps their UTF-8
    /// decoding (`UTF8STRING(localname)!` in `_NSXMLParserStartElementNs`) and the process dies of SIGILL.
    @Test("a model file that is not UTF-8 is refused, not a crash", arguments: [
        [0x3C, 0xFF, 0x00, 0x00, 0x3E],
        Array(#"<model "#.utf8) + [0xFF] + Array(#"="1"/>"#.utf8),
        Array(#"<model><!--"#.utf8) + [0xFF] + Array(#"--></model>"#.utf8),
    ] as [[UInt8]])
    func modelFileNotUTF8(bytes: [UInt8]) {
        #expect(throws: CoreDataStoreError.self) { try ManagedObjectModel(modelFileXML: Data(bytes)) }
    }

    /// `scripts/fuzz deflate`: `inflate(deflate(x), limit: x.count)` failed for the empty input, whose stream is
    /// 03 00 — an output of 0 bytes was refused as "inflated data exceeds 0 bytes".
    @Test("an empty stream inflates under a limit of 0")
    func emptyStreamUnderZeroLimit() throws {
        #expect(try RawDeflate.inflate(Data([0x03, 0x00]), limit: 0) == Data())
    }

    /// `scripts/fuzz history`: input 04 (an empty BLOB). A URI attribute decodes as `.uri` from TEXT but as `.string`
    /// from a BLOB, so the same value changes kind when written back and read again.
    @Test("a URI attribute stored as a BLOB decodes as .uri")
    func uriFromBlob() {
        #expect(AttributeValue(Data().databaseValue, type: .uri) == .uri(""))
        #expect(AttributeValue(Data("https://example.com/a".utf8).databaseValue, type: .uri) == .uri("https://example.com/a"))
    }

    /// `scripts/fuzz modelxml` (10-minute run): a processing instruction without data, `<?x?>`, makes FoundationXML
    /// call strlen(NULL) (SEGV in xmlParsePI's callback). Model files hold no processing instruction but the declaration.
    @Test("a processing instruction in a model file is refused, not a crash", arguments: [
        "<?x?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\"></model>",
        "<?xml version=\"1.0\"?><model><?x?></model>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><model><!-- <?x?> --></model>",
    ])
    func processingInstruction(text: String) {
        #expect(throws: CoreDataStoreError.self) { try ManagedObjectModel(modelFileXML: Data(text.utf8)) }
    }

    @Test("the XML declaration itself is fine")
    func declaration() throws {
        let model = try ManagedObjectModel(modelFileXML: Data(#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><model type="com.apple.IDECoreDataModeler.DataModel"><entity name="A"/></model>"#.utf8))
        #expect(model.entities.map(\.name) == ["A"])
    }
}
