import Foundation

/// An item with the writer's per-item work done ahead, on the thread that prepares it: its texts
/// joined, its attributes encoded, and its texts tokenized as FTS5 would tokenize them.
///
/// A writer spends most of a bulk export inside its write transaction, on one core. Items prepared on
/// another thread (an exporter's producer) leave the writer only SQLite's own work: FTS5 takes the
/// prepared tokens instead of segmenting the text again. The index is the same either way.
public struct PreparedItem: Sendable {
    /// The item.
    public let item: IndexedItem
    /// Text values joined by the field separator, as `item_texts` and FTS5 store them.
    package let text: String
    package let keywords: String
    /// The filter attributes in their canonical text.
    package let attributes: String
    /// The tokens, once computed: an item found unchanged is never tokenized.
    package private(set) var tokens: Tokens?
    /// The four texts the item replaces in the index, as they were read ahead, with their token streams
    /// (see ``SearchIndex/prepareReplacements(of:)``): FTS5's delete of the old text replays them.
    var replaced: (texts: [String], streams: [[UInt8]?])?

    /// Token streams of the four FTS5 columns and the positions of each text and keyword value.
    package struct Tokens: Sendable {
        /// Display name, title, text and keywords, in FTS5's column order; nil where ICU failed.
        package var streams: [[UInt8]?]
        /// Position counts, `name title|text values|keyword values` ("1 2|3 1 2|1 1"): what lets
        /// `searchlight_rank` score each value, and size each column without asking FTS5.
        package var valueLengths: String
        /// The four columns' tokens in one record (`items.term_vector`): what a place search checks and
        /// scores the places of a circle with, without FTS5. nil where ICU failed.
        package var termVector: [UInt8]?
    }

    /// Prepares an item for writing: joins, encodes and tokenizes it.
    public init(_ item: IndexedItem) {
        self.init(item, tokenized: true)
    }

    init(_ item: IndexedItem, tokenized: Bool) {
        // SQLite's text with a NUL reads back cut at it (as a Swift string from the C API), so the old text FTS5's
        // delete is given would lack the tokens after it, and they would stay in the index: every text FTS5
        // sees holds U+FFFD instead, as PostgreSQL stores it (neither makes a token).
        var item = item
        func holdsNUL(_ text: String) -> Bool { text.utf8.contains(0) }
        // Checked field by field: an export prepares every item here, and joining the lists would copy them.
        if holdsNUL(item.displayName) || holdsNUL(item.title) || item.text.contains(where: holdsNUL) || item.keywords.contains(where: holdsNUL) {
            item.displayName = SearchIndex.withoutNUL(item.displayName)
            item.title = SearchIndex.withoutNUL(item.title)
            item.text = item.text.map(SearchIndex.withoutNUL)
            item.keywords = item.keywords.map(SearchIndex.withoutNUL)
        }
        self.item = item
        text = SearchIndex.joined(item.text)
        keywords = SearchIndex.joined(item.keywords)
        attributes = SearchIndex.encoded(item.attributes)
        if tokenized { tokenize() }
    }

    /// Tokenizes the texts, unless done already.
    package mutating func tokenize() {
        guard tokens == nil else { return }
        let streams = [item.displayName, item.title, text, keywords].map(SearchTokenizer.documentStream(of:))
        tokens = Tokens(streams: streams, valueLengths: SearchIndex.valueLengths(displayName: streams[0], title: streams[1],
                                                                                 text: (item.text, streams[2]), keywords: (item.keywords, streams[3])),
                        termVector: SearchTokenizer.termVector(streams: streams))
    }
}

extension SearchIndex {
    /// The text with every NUL replaced by U+FFFD (the text itself when it holds none).
    package static func withoutNUL(_ text: String) -> String {
        text.utf8.contains(0) ? String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 })) : text
    }

    /// Each column's and value's position count, `name title|text values|keyword values` ("1 2|3 1 2|1 1"),
    /// counted in the tokens FTS5 itself stores (the joined texts'). A list of one empty value is empty.
    static func valueLengths(displayName: [UInt8]?, title: [UInt8]?, text: (values: [String], stream: [UInt8]?),
                             keywords: (values: [String], stream: [UInt8]?)) -> String {
        func positions(_ stream: [UInt8]?) -> Int { stream.flatMap { SearchTokenizer.valuePositions(in: $0, valueStarts: [0])?.first } ?? 0 }
        func counts(_ values: [String], _ stream: [UInt8]?) -> String {
            if values.count == 1 && values[0].isEmpty { return "" }
            var starts: [Int32] = [], offset = 0
            for value in values {
                starts.append(Int32(truncatingIfNeeded: offset))
                offset += value.utf8.count + 1
            }
            let positions = stream.flatMap { SearchTokenizer.valuePositions(in: $0, valueStarts: starts) } ?? Array(repeating: 0, count: values.count)
            return positions.map(String.init).joined(separator: " ")
        }
        return "\(positions(displayName)) \(positions(title))|" + counts(text.values, text.stream) + "|" + counts(keywords.values, keywords.stream)
    }

    /// The value lengths of an item as stored (schema migrations).
    static func valueLengths(displayName: String, title: String, text: [String], keywords: [String]) -> String {
        valueLengths(displayName: SearchTokenizer.documentStream(of: displayName), title: SearchTokenizer.documentStream(of: title),
                     text: (text, SearchTokenizer.documentStream(of: joined(text))),
                     keywords: (keywords, SearchTokenizer.documentStream(of: joined(keywords))))
    }
}
