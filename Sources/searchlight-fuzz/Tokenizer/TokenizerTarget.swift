import CSearchTokenizer
import Foundation
import GRDB
import GRDBSQLite
@testable import SearchIndex

/// Fuzzes the tokenizer as documents meet it: identifier parts (colocated tokens) must lie inside their
/// word, and a document inserted into FTS5 then deleted (which re-tokenizes it) must leave an index that
/// passes FTS5's integrity check. A tokenizer that emitted different tokens the second time would
/// corrupt every index it touched. The document goes in a second time from its prepared token stream
/// (what a first export offers FTS5) and is deleted by tokenizing: a replay that differed from
/// tokenizing would fail the same check. Last, the input read as values joined by the field separator
/// (U+001F) is tokenized from another list sharing its values (``SearchTokenizer/documentStream(of:sharingValuesWith:stream:)``,
/// what re-indexing a renamed country's places does): it must give the stream tokenizing it whole gives.
enum TokenizerTarget {
    static let database = FuzzDatabase.withTokenizer("""
        CREATE TABLE content (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
        CREATE VIRTUAL TABLE fts USING fts5(text, content='content', content_rowid='id', tokenize='\(SearchTokenizer.name)');
        INSERT INTO content VALUES (1, 'DeviceMigrationState_FD0781A4 Zürich 横浜市');
        INSERT INTO fts (rowid, text) VALUES (1, 'DeviceMigrationState_FD0781A4 Zürich 横浜市');
        """)

    static let target = FuzzTarget(name: "tokenizer", prepare: { _ = database }) { data in
        let text = String(decoding: data, as: UTF8.self)
        let tokens = SearchTokenizer.tokens(in: text, withParts: true)
        var word: Range<Int>?
        for token in tokens {
            if token.isPart {
                guard let word, word.contains(token.range.lowerBound), token.range.upperBound <= word.upperBound else {
                    fatalError("part \(token) lies outside its word \(String(describing: word)) in \(text.debugDescription)")
                }
            } else {
                word = token.range
            }
        }
        guard tokens.filter({ !$0.isPart }).map(\.text) == SearchTokenizer.tokens(in: text).map(\.text) else {
            fatalError("documents and queries see different words in \(text.debugDescription)")
        }
        let values = text.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        // Its first value is left out of the reference (tokenized alone, then moved), the rest reversed.
        let reference = (values.dropFirst().reversed() + ["Confoederatio Helvetica"]).joined(separator: "\u{1F}")
        if let referenceStream = SearchTokenizer.documentStream(of: reference), let whole = SearchTokenizer.documentStream(of: text) {
            let shared = SearchTokenizer.documentStream(of: text, sharingValuesWith: reference, stream: referenceStream)
            // nil is the safe answer (the caller tokenizes whole); other tokens would corrupt FTS5's delete.
            guard shared == nil || shared == whole else {
                fatalError("the values of \(text.debugDescription) tokenize otherwise from \(reference.debugDescription)")
            }
        }
        do {
            try database.write { db in
                try db.execute(sql: "INSERT INTO content VALUES (2, ?)", arguments: [text])
                try db.execute(sql: "INSERT INTO fts (rowid, text) VALUES (2, ?)", arguments: [text])
                try db.execute(sql: "INSERT INTO fts (fts, rowid, text) VALUES ('delete', 2, ?)", arguments: [text])
                try db.execute(sql: "DELETE FROM content WHERE id = 2")
                try db.execute(sql: "INSERT INTO fts (fts, rank) VALUES ('integrity-check', 1)")
            }
            // A transaction of its own: SQLite's FTS5 (3.40) reports a rowid deleted before an in-transaction
            // integrity-check and inserted after it as damage, tokenizer or not (checked with unicode61).
            try database.write { db in
                guard let stream = SearchTokenizer.documentStream(of: text), let offers = searchlight_token_offers(db.sqliteConnection) else { return }
                var utf8 = Array(text.utf8)
                let count = utf8.count
                let offered = utf8.withUnsafeMutableBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { characters in
                        stream.withUnsafeBufferPointer { searchlight_offer_tokens(offers, characters.baseAddress, Int32(count), $0.baseAddress, Int32($0.count)) }
                    }
                }
                guard offered == 0 else { fatalError("cannot offer the stream of \(text.debugDescription)") }
                defer { searchlight_withdraw_tokens(offers) }
                try db.execute(sql: "INSERT INTO content VALUES (2, ?)", arguments: [text])
                try db.execute(sql: "INSERT INTO fts (rowid, text) VALUES (2, ?)", arguments: [text])
                searchlight_withdraw_tokens(offers)
                try db.execute(sql: "INSERT INTO fts (fts, rowid, text) VALUES ('delete', 2, ?)", arguments: [text])
                try db.execute(sql: "DELETE FROM content WHERE id = 2")
                try db.execute(sql: "INSERT INTO fts (fts, rank) VALUES ('integrity-check', 1)")
            }
        } catch {
            fatalError("FTS5 insert/delete of \(text.debugDescription) broke the index: \(error)")
        }
        // GRDB binds a string up to its first NUL: that is the document FTS5 sees here.
        let stored = String(decoding: text.utf8.prefix { $0 != 0 }, as: UTF8.self)
        checkWatching(stored, tokens: Set(SearchTokenizer.tokens(in: stored, withParts: true).map(\.text)))
    }

    /// Term leader lists: writing and deleting the document touches exactly the watched terms it holds and
    /// the watched prefixes (`key*`) some token of it starts with, byte by byte, as computed here apart.
    static func checkWatching(_ text: String, tokens: Set<String>) {
        var keys: Set<String> = ["z*", "zü*", "横*", "device*", "zürich", "fd0781a4", "\u{D15}\u{D4E}*", String(repeating: "a", count: 32) + "*"]
        for token in tokens.sorted().prefix(6) {
            keys.insert(token)
            for length in 1...3 where length <= token.unicodeScalars.count {
                keys.insert(String(String.UnicodeScalarView(token.unicodeScalars.prefix(length))) + "*")
            }
        }
        let expected = keys.filter { key in
            // By its last byte: a character may cluster with the star (U+0D4E does).
            guard key.utf8.last == UInt8(ascii: "*") else { return tokens.contains(key) }
            let prefix = Array(key.utf8.dropLast())
            return tokens.contains { Array($0.utf8).starts(with: prefix) }
        }
        do {
            try database.write { db in
                guard let offers = searchlight_token_offers(db.sqliteConnection) else { return }
                defer { searchlight_watch_reset(offers, -1) }
                _ = drain(offers)
                searchlight_watch_reset(offers, 1)
                for key in keys {
                    var key = key
                    let status = key.withUTF8 { utf8 in
                        utf8.withMemoryRebound(to: CChar.self) { searchlight_watch_term(offers, $0.baseAddress, Int32($0.count)) }
                    }
                    guard status == SQLITE_OK else { fatalError("cannot watch \(key.debugDescription)") }
                }
                try db.execute(sql: "INSERT INTO content VALUES (2, ?)", arguments: [text])
                try db.execute(sql: "INSERT INTO fts (rowid, text) VALUES (2, ?)", arguments: [text])
                try db.execute(sql: "INSERT INTO fts (fts, rowid, text) VALUES ('delete', 2, ?)", arguments: [text])
                try db.execute(sql: "DELETE FROM content WHERE id = 2")
                let touched = drain(offers)
                guard touched == expected else {
                    fatalError("\(text.debugDescription) touched \(String(describing: touched?.sorted())), not \(expected.sorted())")
                }
            }
        } catch {
            fatalError("watching \(text.debugDescription): \(error)")
        }
    }

    /// The touched keys since the last drain; nil when the tokenizer says every list is touched.
    static func drain(_ offers: UnsafeMutableRawPointer) -> Set<String>? {
        var touched: Set<String> = []
        let status = withUnsafeMutablePointer(to: &touched) { pointer in
            searchlight_drain_touched(offers, pointer) { context, term, length in
                guard let context, let term else { return 1 }
                let bytes = UnsafeRawBufferPointer(start: term, count: Int(length))
                context.assumingMemoryBound(to: Set<String>.self).pointee.insert(String(decoding: bytes, as: UTF8.self))
                return 0
            }
        }
        return status == 0 ? touched : nil
    }
}
