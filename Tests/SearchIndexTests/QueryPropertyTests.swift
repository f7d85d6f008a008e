import Foundation
@testable import SearchIndex
import SeededRandom
import Testing

/// Every string is a query or a clear usage error: never an FTS5 syntax error.
@Suite("Query language properties")
struct QueryPropertyTests {
    /// Scalars that stress the lexer and FTS5: quotes of every kind, combining marks, operators, stars,
    /// dashes, brackets, CJK, spaces, controls, surrogate-range neighbours and the replacement character.
    static let alphabet: [Unicode.Scalar] = Array("\"“”„«»＂'*-()^:{}+ ORNDTAEXn orNEAR\t\n横浜東京abcXYZ012é".unicodeScalars)
        + [0x0301, 0x0316, 0x0338, 0x200B, 0x200D, 0xFEFF, 0x0000, 0x0007, 0x001B, 0xFFFD, 0x1F600, 0x0E01, 0x0E34].compactMap(Unicode.Scalar.init)

    @Test("10,000 random strings: each parses to a query FTS5 accepts, or is refused as a usage error")
    func randomStrings() throws {
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("p.searchindex").path,
                                    mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: [IndexFixtures.item(1, "Tokyo", text: ["横浜 or and near"], latitude: 35.7, longitude: 139.7)],
                                   checkpoint: IndexFixtures.checkpoint(1)))
        var generator = SeededGenerator(seed: 2026)
        var searched = 0
        for _ in 0..<10_000 {
            let length = Int.random(in: 1...24, using: &generator)
            let text = String(String.UnicodeScalarView((0..<length).map { _ in Self.alphabet.randomElement(using: &generator) ?? "a" }))
            do {
                _ = try index.search(SearchRequest(query: text))
                searched += 1
            } catch .invalidQuery {
                continue
            } catch {
                Issue.record("\(text.unicodeScalars.map { String($0.value, radix: 16) }): \(error)")
            }
        }
        #expect(searched > 5_000)
    }

    @Test("invalid UTF-8 from the command line reaches the parser as replacement characters and is a query")
    func invalidUTF8() throws {
        let bytes: [UInt8] = [0x22, 0xCC, 0x22, 0xFF, 0x74, 0x6F, 0x6B, 0x2A, 0xC0, 0xAF]
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try QueryParser.parse(text)
    }

    @Test("phrase prefixes, curly quotes, quotes with combining marks, dangling OR")
    func syntax() throws {
        let phrase = try QueryParser.parse("\"san fran*\"")
        #expect(phrase.required == [[ParsedQuery.Term(text: "san fran", tokens: ["san", "fran"], isPrefix: true, isPhrase: true)]])
        #expect(try QueryParser.parse("\"san fran\"*") == phrase)
        #expect(try QueryParser.parse("“san fran*”") == phrase)
        #expect(try QueryParser.parse("„new york“").required.first?.first?.tokens == ["new", "york"])
        #expect(try QueryParser.parse("«new york»").required.first?.first?.isPhrase == true)
        // A quote carrying a combining accent is still a quote, and FTS5 gets its text escaped.
        let accented = try QueryParser.parse("tokyo \"\u{0301}abc")
        #expect(accented.required.count == 2)
        for dangling in ["tokyo OR", "OR tokyo", "OR", "tokyo OR OR kyoto"] {
            #expect(throws: SearchIndexError.self, "\(dangling)") { try QueryParser.parse(dangling) }
        }
        #expect(try QueryParser.parse("tokyo or kyoto").required.count == 3)
    }
}
