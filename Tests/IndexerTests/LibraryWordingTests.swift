import Foundation
import Testing

/// The libraries speak facts, the command line speaks to people: no message, comment or name in the three
/// libraries tells the user about `searchctl` or one of its flags (an app that embeds them has neither).
@Suite("Library wording")
struct LibraryWordingTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    @Test("no searchctl and no --flag in CoreDataStore, SearchIndex or Indexer")
    func noCommandLineWords() throws {
        let flag = try Regex("(^|[^-])--[a-z]")
        var found: [String] = []
        for library in ["CoreDataStore", "SearchIndex", "Indexer"] {
            let folder = Self.sources.appendingPathComponent(library)
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            for file in files where ["swift", "md"].contains(file.pathExtension) {
                for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("searchctl") || line.contains(flag) {
                    found.append("\(file.lastPathComponent):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
