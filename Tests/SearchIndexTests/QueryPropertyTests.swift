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
                // Half of them as typed, half as you type (the last word a prefix).
                var request = SearchRequest(query: text)
                request.lastWordIsPrefix = searched % 2 == 0
                _ = try index.search(request)
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

    @Test("as you type: the last word is a prefix, unless a space, a closing quote or an exclusion finishes it")
    func prefixLast() throws {
        func parse(_ text: String) throws -> ParsedQuery { try QueryParser.parse(text, lastWordIsPrefix: true) }
        #expect(try parse("san fr").required.map { $0.map(\.isPrefix) } == [[false], [true]])
        #expect(try parse("san fr ").required.map { $0.map(\.isPrefix) } == [[false], [false]])
        #expect(try parse("\"san fr").required.first?.first.map { [$0.isPhrase, $0.isPrefix] } == [true, true])
        #expect(try parse("\"san fr\"").required.first?.first?.isPrefix == false)
        #expect(try parse("paris -lon").required.map { $0.map(\.isPrefix) } == [[false]])
        // A final OR is the start of a word (Orlando), not a dangling operator.
        #expect(try parse("tokyo OR").required.map { $0.map(\.tokens) } == [[["tokyo"]], [["or"]]])
        #expect(try parse("tokyo OR").required.last?.first?.isPrefix == true)
        #expect(try parse("tokyo OR ky").required.map { $0.map(\.isPrefix) } == [[false, true]])
        #expect(throws: SearchIndexError.self) { try parse("tokyo OR ") }
    }

    @Test("as you type, against brute force: every prefix of every word typed so far finds exactly the items holding it")
    func prefixLastBruteForce() throws {
        let names = ["San Francisco", "San Fernando", "Santa Fe", "São Paulo", "Sankt Gallen", "Frankfurt am Main", "Franklin",
                     "New York", "Newark", "Newcastle upon Tyne", "Zürich", "Zurich Lake", "Orlando", "Oran", "東京都", "横浜市"]
        let index = try SearchIndex(path: IndexFixtures.temporaryDirectory().appendingPathComponent("p.searchindex").path,
                                    mode: .readWrite(permissions: nil))
        try index.apply(IndexBatch(upserts: names.enumerated().map { IndexFixtures.item($0.offset + 1, $0.element) }, checkpoint: IndexFixtures.checkpoint(1)))
        let words = names.map { Set(SearchTokenizer.tokens(in: $0).map(\.text)) }
        var checked = 0
        for name in names {
            let scalars = Array(name.unicodeScalars)
            for length in 1...scalars.count {
                let typed = String(String.UnicodeScalarView(scalars[..<length]))
                guard let parsed = try? QueryParser.parse(typed, lastWordIsPrefix: true) else { continue }
                // Brute force: every finished word is a token of the item, the last one a token's prefix.
                let terms = parsed.required.map { $0[0] }
                let expected = Set(words.indices.filter { item in
                    terms.allSatisfy { term in
                        term.tokens.enumerated().allSatisfy { position, token in
                            term.isPrefix && position == term.tokens.count - 1
                                ? words[item].contains { $0.hasPrefix(token) } : words[item].contains(token)
                        }
                    }
                }.map { "x-coredata://STORE-A/Place/p\($0 + 1)" })
                var request = SearchRequest(query: typed, limit: 100)
                request.lastWordIsPrefix = true
                request.typoTolerance = false  // the brute force matches as typed; typos have their own tests
                #expect(Set(try index.search(request).hits.map(\.uri)) == expected, "\(typed)")
                #expect(expected.contains("x-coredata://STORE-A/Place/p\((names.firstIndex(of: name) ?? 0) + 1)") || typed.hasSuffix(" "), "\(typed)")
                checked += 1
            }
        }
        #expect(checked > 100)
    }
}
