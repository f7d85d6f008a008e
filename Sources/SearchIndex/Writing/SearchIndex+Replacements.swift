import GRDB

extension SearchIndex {
    /// Reads the texts that `items` will replace and tokenizes them ahead, on the caller's thread.
    ///
    /// Replacing an item's text removes the old text from the full-text index, and FTS5 tokenizes the old
    /// text to find what to remove: on the writer's thread, the one a follower's throughput depends on.
    /// Called where items are prepared, this moves that work off it. A column whose text is the new one
    /// reuses the item's own tokens. Nothing depends on the read being current: the writer replays
    /// tokens only for byte-identical text, so a text changed meanwhile is tokenized by the writer, as
    /// without this. Items not in the index are left as they are.
    public func prepareReplacements(of items: inout [PreparedItem]) throws(SearchIndexError) {
        guard !items.isEmpty else { return }
        try read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT i.display_name, t.title, t.text, t.keywords FROM items i JOIN item_texts t ON t.id = i.id WHERE i.uri = ?
                """)
            for index in items.indices {
                guard let row = try Row.fetchOne(statement, arguments: [items[index].item.uri]) else { continue }
                let item = items[index]
                let current = [item.item.displayName, item.item.title, item.text, item.keywords]
                var texts: [String] = [], streams: [[UInt8]?] = []
                for column in 0..<4 {
                    let old: String = try row.text(column)
                    texts.append(old)
                    let stream = item.tokens?.streams[column]
                    // Byte for byte: String's == calls canonically equal texts equal (NFD and NFC Hangul), whose
                    // tokens can differ, and the offer is taken for the old text's exact bytes.
                    if BinaryCollation.equal(old, current[column]), let stream {
                        streams.append(stream)
                    } else if column >= 2, let stream {
                        // A list of values (texts, keywords) that changed in one or two of them: the values
                        // it shares with the new list reuse their tokens.
                        streams.append(SearchTokenizer.documentStream(of: old, sharingValuesWith: current[column], stream: stream)
                            ?? SearchTokenizer.documentStream(of: old))
                    } else {
                        streams.append(SearchTokenizer.documentStream(of: old))
                    }
                }
                items[index].replaced = (texts, streams)
            }
        }
    }
}
