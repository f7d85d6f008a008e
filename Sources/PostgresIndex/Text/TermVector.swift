import SearchIndex

/// An item's four texts as a PostgreSQL `tsvector`: every token Searchlight's tokenizer gives FTS5 (words
/// and identifiers' parts), at FTS5's position, the column told by the weight (A display name, B title,
/// C text, D keywords).
///
/// Text is tokenized here, by the same ICU tokenizer as the SQLite index, never by PostgreSQL's parsers:
/// CJK and Thai are segmented into words, and a phrase or prefix matches exactly what it matches in
/// SQLite. Columns are one position apart, so that no phrase spans two of them (FTS5's phrases stay in
/// one column; values within a column are adjacent there too).
struct TermVector {
    /// Positions PostgreSQL keeps: 1 through 16,383 (later ones are stored as 16,383).
    static let maximumPosition = 16_383
    /// Positions PostgreSQL keeps per lexeme.
    static let maximumPositionsPerLexeme = 256
    /// Bytes PostgreSQL accepts in one lexeme.
    static let maximumLexemeBytes = 2_046
    /// Bytes of lexemes (and positions) PostgreSQL accepts in one tsvector; kept well below its 1 MiB.
    static let maximumBytes = 900_000

    /// The tsvector's text form (`'lexeme':1A,5A 'other':2C`).
    let literal: String
    /// Each column's size in positions, as FTS5 counts them.
    let columnSizes: [Int]
    /// The lexemes the vector holds, each once.
    let lexemes: [String]

    /// The vector of four columns' tokens (display name, title, joined text, joined keywords), as FTS5
    /// stores them: words, each followed by its identifier parts at its position.
    init(columns: [[SearchTokenizer.Token]]) {
        var positions: [String: [(Int, Character)]] = [:]
        var order: [String] = []
        var sizes: [Int] = []
        var base = 0
        for (column, tokens) in columns.enumerated() {
            let weight: Character = ["A", "B", "C", "D"][min(column, 3)]
            var position = -1
            for token in tokens {
                if !token.isPart || position < 0 { position += 1 }
                if positions[token.text] == nil { order.append(token.text) }
                positions[token.text, default: []].append((min(base + position + 1, Self.maximumPosition), weight))
            }
            sizes.append(position + 1)
            base += position + 2
        }
        var literal = ""
        var bytes = 0
        var kept: [String] = []
        for lexeme in order {
            let length = lexeme.utf8.count
            // PostgreSQL's text holds no NUL: a lexeme with one (the tokenizer makes none) is left out.
            guard length > 0, length <= Self.maximumLexemeBytes, bytes + length < Self.maximumBytes, !lexeme.utf8.contains(0),
                  let list = positions[lexeme] else { continue }
            bytes += length + 8
            // PostgreSQL keeps a lexeme's positions distinct and sorted; the first occurrence of each wins.
            var seen = Set<Int>()
            var entries: [(Int, Character)] = []
            for entry in list where seen.insert(entry.0).inserted && entries.count < Self.maximumPositionsPerLexeme { entries.append(entry) }
            entries.sort { $0.0 < $1.0 }
            if !literal.isEmpty { literal += " " }
            literal += Self.quoted(lexeme) + ":" + entries.map { "\($0.0)\($0.1)" }.joined(separator: ",")
            kept.append(lexeme)
        }
        self.literal = literal
        self.lexemes = kept
        self.columnSizes = sizes
    }

    /// The vector of a prepared item: the token streams it was prepared with, tokenized once for both
    /// backends (a column whose stream ICU could not make is tokenized as text, as FTS5 then does).
    init(_ prepared: PreparedItem) {
        var prepared = prepared
        prepared.tokenize()
        let texts = [prepared.item.displayName, prepared.item.title, prepared.text, prepared.keywords]
        let streams = prepared.tokens?.streams ?? []
        self.init(columns: texts.indices.map { column in
            (column < streams.count ? streams[column] : nil).flatMap(SearchTokenizer.tokens(inStream:))
                ?? SearchTokenizer.tokens(in: texts[column], withParts: true)
        })
    }

    /// A lexeme quoted for tsvector and tsquery input: in single quotes, quotes and backslashes doubled.
    static func quoted(_ lexeme: String) -> String {
        var quoted = "'"
        for character in lexeme.unicodeScalars {
            if character == "'" || character == "\\" { quoted.unicodeScalars.append(character) }
            quoted.unicodeScalars.append(character)
        }
        return quoted + "'"
    }

    /// The first tsvector position of each column, from the columns' sizes.
    static func bases(columnSizes sizes: [Int]) -> [Int] {
        var bases: [Int] = []
        var base = 0
        for size in sizes {
            bases.append(base)
            base += size + 1
        }
        return bases
    }
}
