@testable import SearchIndex
import Testing

@Suite("The ICU tokenizer")
struct TokenizerTests {
    func words(_ text: String) -> [String] { SearchTokenizer.tokens(in: text).map(\.text) }

    @Test("segments every script into words and normalizes them", arguments: [
        ("横浜市の港", ["横浜", "市", "の", "港"]),
        ("東京都渋谷区", ["東京", "都", "渋谷", "区"]),
        ("Zürich", ["zurich"]),
        ("Straße", ["strasse"]),
        ("ＴＯＫＹＯ", ["tokyo"]),
        ("São Paulo, BRASIL!", ["sao", "paulo", "brasil"]),
        ("Ærøskøbing", ["ærøskøbing"]),
        ("İstanbul", ["istanbul"]),
        ("Hà Nội", ["ha", "noi"]),
        ("naïve café", ["naive", "cafe"]),
        ("ﬁle Ⅻ", ["file", "xii"]),
        ("Москва", ["москва"]),
        ("القاهرة", ["القاهرة"]),
        ("서울특별시", ["서울특별시"]),
        // Kana voicing marks are part of the letter: が stays が (ICU's dictionary splits ガン/ダム).
        ("ガンダム と がんだむ", ["ガン", "ダム", "と", "がん", "だ", "む"]),
    ])
    func scripts(text: String, expected: [String]) {
        #expect(words(text) == expected)
    }

    @Test("Thai is split into words and keeps its vowel signs")
    func thai() {
        let tokens = words("ยินดีต้อนรับสู่กรุงเทพมหานคร")
        #expect(tokens == ["ยินดี", "ต้อนรับ", "สู่", "กรุงเทพมหานคร"])
    }

    @Test("byte ranges point at the original text")
    func ranges() {
        let text = "Grüße aus Zürich und 横浜"
        let bytes = Array(text.utf8)
        for token in SearchTokenizer.tokens(in: text) {
            let original = String(decoding: bytes[token.range], as: UTF8.self)
            #expect(words(original) == [token.text])
        }
        #expect(SearchTokenizer.tokens(in: text).map(\.range).last == (bytes.count - 6)..<bytes.count)
    }

    @Test("hostile input never crashes")
    func hostile() {
        #expect(words("").isEmpty)
        #expect(words("!!! ??? ---").isEmpty)
        #expect(words("a\u{0}b") == ["a", "b"])
        #expect(words(String(repeating: "word ", count: 20_000)).count == 20_000)
        #expect(words("\u{0301}\u{0301}").isEmpty) // only diacritics
    }

    @Test("a word of 400,000 alternating combining marks tokenizes in linear time, cut to its first 256 units",
          .timeLimit(.minutes(1)))
    func combiningMarkRuns() {
        // U+0316 (class 220) and U+0301 (class 230) alternate: canonical reordering of the whole run was
        // quadratic (45 s for a far shorter field).
        let marks = String(String.UnicodeScalarView((0..<400_000).map { $0 % 2 == 0 ? Unicode.Scalar(0x0316)! : Unicode.Scalar(0x0301)! }))
        let field = "x" + marks + " tokyo"
        let tokens = SearchTokenizer.tokens(in: field)
        #expect(tokens.map(\.text) == ["x", "tokyo"])
        // The long word's range still spans all of it, for highlights.
        #expect(tokens.first?.range.upperBound == ("x" + marks).utf8.count)
        // A long word and its first 256 units are one and the same token, in documents and queries alike.
        let long = String(repeating: "a", count: 1_000)
        #expect(words(long) == [String(repeating: "a", count: 256)])
    }
}
