import SearchIndex

/// An item as a row of `searchlight_items`: what ``PreparedItem`` makes of it for the SQLite index (joined
/// texts, value lengths, attributes' canonical text, token streams), its term vector, and a digest that
/// tells an unchanged item.
struct ItemRow {
    let item: IndexedItem
    let text: String
    let keywords: String
    let valueLengths: String
    let attributes: String
    let vector: TermVector
    let digest: String
    /// One row per attribute value the index can hold (finite ones), as `searchlight_attributes` keeps them.
    let attributeRows: [(name: String, value: FilterValue)]

    var uri: String { item.uri }

    /// What a row stores of a prepared item, before any tokenizing: its fields as PostgreSQL holds them
    /// and their digest, enough to tell an unchanged item, which is then never tokenized.
    struct Stored {
        let item: IndexedItem
        let text: String
        let keywords: String
        let attributes: String
        let digest: String

        init(_ prepared: PreparedItem) {
            var item = prepared.item
            // As the SQLite index: a place only when both coordinates are valid.
            if !item.hasLocation { (item.latitude, item.longitude) = (nil, nil) }
            // PostgreSQL's text holds no NUL (a batch holding one would fail on every retry): stored as U+FFFD.
            // Tokens are unaffected (the tokenizer never makes one of a NUL).
            if prepared.attributes.utf8.contains(0) {
                item.attributes = item.attributes.reduce(into: [:]) { attributes, entry in
                    attributes[ItemRow.withoutNUL(entry.key)] = entry.value.map { value in
                        if case .string(let text) = value { return .string(ItemRow.withoutNUL(text)) }
                        return value
                    }
                }
            }
            item.entity = ItemRow.withoutNUL(item.entity)
            item.displayName = ItemRow.withoutNUL(item.displayName)
            item.title = ItemRow.withoutNUL(item.title)
            self.item = item
            text = ItemRow.withoutNUL(prepared.text)
            keywords = ItemRow.withoutNUL(prepared.keywords)
            attributes = ItemRow.withoutNUL(prepared.attributes)
            // Every stored field, in a fixed order; a field separator that cannot occur in the joined texts.
            let fields = [item.entity, item.displayName, item.title, text, keywords, item.latitude.map { "\($0)" } ?? "",
                          item.longitude.map { "\($0)" } ?? "", item.date.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "",
                          "\(item.rank)", attributes]
            digest = FNV1a.hex(fields.joined(separator: "\u{1E}"))
        }
    }

    /// The row of a prepared item: its joined texts, attributes, value lengths and tokens are the ones the
    /// SQLite index writes, made once (`stored` already made of it).
    init(_ prepared: PreparedItem, stored: Stored) {
        var prepared = prepared
        prepared.tokenize()
        item = stored.item
        text = stored.text
        keywords = stored.keywords
        attributes = stored.attributes
        digest = stored.digest
        valueLengths = prepared.tokens?.valueLengths ?? ""
        vector = TermVector(prepared)
        attributeRows = item.attributes.flatMap { name, values in values.filter(\.isFinite).map { (name, $0) } }
    }

    /// The text with every NUL replaced by U+FFFD (the text itself when it holds none).
    static func withoutNUL(_ text: String) -> String { SearchIndex.withoutNUL(text) }

    /// Changes to the ranking's statistics: items and each column's positions.
    struct Statistics {
        var items = 0, name = 0, title = 0, text = 0, keywords = 0

        mutating func add(_ row: ItemRow) {
            items += 1
            name += row.vector.columnSizes[0]
            title += row.vector.columnSizes[1]
            text += row.vector.columnSizes[2]
            keywords += row.vector.columnSizes[3]
        }

        mutating func subtract(name: Int, title: Int, text: Int, keywords: Int) {
            items -= 1
            self.name -= name
            self.title -= title
            self.text -= text
            self.keywords -= keywords
        }
    }
}
