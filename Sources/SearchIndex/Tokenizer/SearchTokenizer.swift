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
    }

    /// The number of positions FTS5 gives the text: its words (identifier parts share their word's position).
    static func positionCount(in text: String) -> Int {
        var text = text
        return text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                Int(max(0, searchlight_token_count(characters.baseAddress, Int32(characters.count))))
            }
        }
    }

    /// Tokenizes text as queries are: words only. With `withParts`, as documents are indexed: each
    /// identifier (`DeviceMigrationState_FD0781A4`, `example.com`, `camelCase`) followed by its parts.
    public static func tokens(in text: String, withParts: Bool = false) -> [Token] {
        final class Collector { var tokens: [Token] = [] }
        let collector = Collector()
        var utf8 = Array(text.utf8)
        let count = utf8.count
        utf8.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress?.withMemoryRebound(to: CChar.self, capacity: max(count, 1)) { pointer in
                _ = searchlight_tokenize(pointer, Int32(count), withParts ? 1 : 0, Unmanaged.passUnretained(collector).toOpaque()) { context, token, length, start, end, colocated in
                    guard let context, let token else { return 0 }
                    let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
                    let bytes = UnsafeRawBufferPointer(start: token, count: Int(length))
                    collector.tokens.append(Token(text: String(decoding: bytes, as: UTF8.self), range: Int(start)..<Int(end), isPart: colocated != 0))
                    return 0
                }
            }
        }
        return collector.tokens
    }
}
