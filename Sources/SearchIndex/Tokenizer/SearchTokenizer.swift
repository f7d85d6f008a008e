import CSearchTokenizer
import GRDB

/// Searchlight's FTS5 tokenizer: ICU word segmentation for every script, case folding, width and
/// compatibility normalization, diacritic removal that leaves Thai and Indic vowel signs alone.
///
/// The same code tokenizes documents (inside SQLite) and query words (here), so a word the parser
/// keeps is a word the index can match.
public enum SearchTokenizer {
    /// The name tables use: `tokenize='searchlight'`.
    public static let name = SEARCHLIGHT_TOKENIZER_NAME

    /// One token: its normalized text and the UTF-8 byte range it came from.
    public struct Token: Sendable, Hashable {
        /// The normalized token, as the index stores it.
        public var text: String
        /// The byte range in the input's UTF-8.
        public var range: Range<Int>
        /// Whether it is a part of the previous token (an identifier's part, at its position).
        public var isPart = false
    }

    /// Registers the tokenizer on a connection (done for every connection an index opens).
    static func register(on db: Database) throws {
        let status = searchlight_register_tokenizer(db.sqliteConnection)
        guard status == 0 else {
            throw DatabaseError(resultCode: ResultCode(rawValue: status), message: "cannot register the searchlight FTS5 tokenizer")
        }
    }

    /// Registers the BM25F ranking function `searchlight_rank` and the id-set filter `searchlight_in_ids`
    /// on a connection.
    static func registerRanking(on db: Database) throws {
        let status = searchlight_register_rank(db.sqliteConnection)
        guard status == 0 else {
            throw DatabaseError(resultCode: ResultCode(rawValue: status), message: "cannot register the searchlight_rank FTS5 function")
        }
        let idSet = searchlight_register_id_set(db.sqliteConnection)
        guard idSet == 0 else {
            throw DatabaseError(resultCode: ResultCode(rawValue: idSet), message: "cannot register the searchlight_in_ids function")
        }
        let vectors = searchlight_register_term_vectors(db.sqliteConnection)
        guard vectors == 0 else {
            throw DatabaseError(resultCode: ResultCode(rawValue: vectors), message: "cannot register the searchlight_vector_rank function")
        }
    }

    /// An item's term vector (`items.term_vector`, see term_vector.c) from its four columns' document
    /// streams, in FTS5's column order; nil when a stream is missing (ICU failed) or damaged: a search then
    /// asks FTS5 about the item.
    static func termVector(streams: [[UInt8]?]) -> [UInt8]? {
        guard streams.count == Int(SEARCHLIGHT_RANK_COLUMNS), streams.allSatisfy({ $0 != nil }) else { return nil }
        let columns = streams.map { $0 ?? [] }
        return withPointers(to: columns) { pointers, lengths in
            stream(expected: columns.reduce(0) { $0 + $1.count } / 3 + 16) { buffer, capacity in
                searchlight_term_vector(pointers, lengths, buffer, capacity)
            }
        }
    }

    /// The term vector of the four FTS5 columns' texts (display name, title, joined text, joined keywords).
    static func termVector(ofColumns texts: [String]) -> [UInt8]? {
        termVector(streams: texts.map(documentStream(of:)))
    }

    /// Calls `body` with C arrays of pointers to each byte array's storage and of their lengths (valid only
    /// inside it).
    package static func withPointers<Result>(to arrays: [[UInt8]], _ body: ([UnsafePointer<UInt8>?], [Int32]) -> Result) -> Result {
        var pointers: [UnsafePointer<UInt8>?] = []
        func nest(_ index: Int) -> Result {
            guard index < arrays.count else { return body(pointers, arrays.map { Int32($0.count) }) }
            return arrays[index].withUnsafeBufferPointer { buffer in
                pointers.append(buffer.baseAddress)
                return nest(index + 1)
            }
        }
        return nest(0)
    }

    /// The tokens FTS5 gives a document, as a stream a writer offers to its connection's tokenizer
    /// (`searchlight_offer_tokens`); nil when ICU fails (FTS5 then tokenizes, and reports the failure).
    static func documentStream(of text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { characters in
                stream(expected: characters.count) { searchlight_prepare_tokens(characters.baseAddress, Int32(characters.count), $0, $1) }
            }
        }
    }

    /// The stream of `text` — values joined by the field separator — made from the stream of `reference`,
    /// a list that shares most of its values (`searchlight_prepare_tokens_sharing`): equal to
    /// ``documentStream(of:)`` of `text`, with only the values `reference` lacks tokenized. nil when the
    /// splice cannot be trusted or ICU fails (the caller then tokenizes `text` whole).
    ///
    /// Re-indexing an item whose text changed deletes the old text from FTS5, which needs the old text's
    /// tokens: a renamed country changes one value of each of its places' texts, beside dozens of
    /// alternate names, and tokenizing the old texts whole was a tenth of the re-indexing time.
    static func documentStream(of text: String, sharingValuesWith reference: String, stream referenceStream: [UInt8]) -> [UInt8]? {
        var text = text, reference = reference
        return text.withUTF8 { utf8 in
            reference.withUTF8 { referenceUTF8 in
                utf8.withMemoryRebound(to: CChar.self) { characters in
                    referenceUTF8.withMemoryRebound(to: CChar.self) { referenceCharacters in
                        referenceStream.withUnsafeBufferPointer { referenceBytes in
                            stream(expected: referenceStream.count) {
                                searchlight_prepare_tokens_sharing(characters.baseAddress, Int32(characters.count),
                                                                   referenceCharacters.baseAddress, Int32(referenceCharacters.count),
                                                                   referenceBytes.baseAddress, Int32(referenceBytes.count), $0, $1)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Runs a C call that writes a stream into a buffer of a given capacity and returns the stream's full
    /// length (negative on failure), again with a buffer that large when the first was too small.
    private static func stream(expected: Int, _ write: (UnsafeMutablePointer<UInt8>?, Int32) -> Int32) -> [UInt8]? {
        // Most texts are ASCII words: a stream is about twice the text (16-byte record per word).
        var capacity = max(0, expected) * 3 + 64
        while true {
            var stream = [UInt8](repeating: 0, count: capacity)
            let length = stream.withUnsafeMutableBufferPointer { write($0.baseAddress, Int32(capacity)) }
            guard length >= 0 else { return nil }
            if Int(length) <= capacity {
                stream.removeLast(capacity - Int(length))
                return stream
            }
            capacity = Int(length)
        }
    }

    /// For values joined into one text, the positions FTS5 gives each value (its words; identifier parts
    /// share their word's), read from the text's stream. `valueStarts`: each value's first byte.
    static func valuePositions(in stream: [UInt8], valueStarts: [Int32]) -> [Int]? {
        var counts = [Int32](repeating: 0, count: valueStarts.count)
        let status = stream.withUnsafeBufferPointer { bytes in
            valueStarts.withUnsafeBufferPointer { starts in
                counts.withUnsafeMutableBufferPointer { counts in
                    searchlight_stream_value_positions(bytes.baseAddress, Int32(bytes.count), starts.baseAddress, Int32(starts.count), counts.baseAddress)
                }
            }
        }
        return status == 0 ? counts.map(Int.init) : nil
    }

    /// Tokenizes text as queries are: words only. With `withParts`, as documents are indexed: each
    /// identifier (`DeviceMigrationState_FD0781A4`, `example.com`, `camelCase`) followed by its parts.
    public static func tokens(in text: String, withParts: Bool = false) -> [Token] {
        var utf8 = Array(text.utf8)
        let count = utf8.count
        return collect { context, callback in
            utf8.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress?.withMemoryRebound(to: CChar.self, capacity: max(count, 1)) { pointer in
                    _ = searchlight_tokenize(pointer, Int32(count), withParts ? 1 : 0, context, callback)
                }
            }
        }
    }

    /// The tokens of a prepared document stream (``documentStream(of:)``), as FTS5 stores them: words and
    /// identifiers' parts. nil when the stream is damaged.
    package static func tokens(inStream stream: [UInt8]) -> [Token]? {
        var status: Int32 = 0
        let tokens = collect { context, callback in
            status = stream.withUnsafeBufferPointer { searchlight_stream_tokens($0.baseAddress, Int32($0.count), context, callback) }
        }
        return status == 0 ? tokens : nil
    }

    /// Runs a tokenizing call with a callback that collects its tokens.
    private static func collect(_ tokenize: (UnsafeMutableRawPointer, searchlight_token_callback) -> Void) -> [Token] {
        final class Collector { var tokens: [Token] = [] }
        let collector = Collector()
        tokenize(Unmanaged.passUnretained(collector).toOpaque()) { context, token, length, start, end, colocated in
            guard let context, let token else { return 0 }
            let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: token, count: Int(length))
            collector.tokens.append(Token(text: String(decoding: bytes, as: UTF8.self), range: Int(start)..<Int(end), isPart: colocated != 0))
            return 0
        }
        return withExtendedLifetime(collector) { collector.tokens }
    }
}
