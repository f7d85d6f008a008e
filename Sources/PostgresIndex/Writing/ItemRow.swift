import SearchIndex

/// An item as a row of `searchlight_items`: its texts joined as the SQLite index joins them, its value
/// lengths, its attributes' canonical text, its term vector, and a digest that tells an unchanged item.
struct ItemRow {
    let item: IndexedItem
    let text: String
    let keywords: String
    let valueLengths: String
    let attributes: String
    let vector: TermVector
    let digest: String

    var uri: String { item.uri }

    init(_ item: IndexedItem) {
        var item = item
        // As the SQLite index: a place only when both coordinates are valid.
        if !item.hasLocation { (item.latitude, item.longitude) = (nil, nil) }
        self.item = item
        text = SearchIndex.joined(item.text)
        keywords = SearchIndex.joined(item.keywords)
        valueLengths = SearchIndex.valueLengths(displayName: item.displayName, title: item.title, text: item.text, keywords: item.keywords)
        attributes = SearchIndex.encoded(item.attributes)
        vector = TermVector(columns: [item.displayName, item.title, text, keywords])
        // Every stored field, in a fixed order; a field separator that cannot occur in the joined texts.
        let fields = [item.entity, item.displayName, item.title, text, keywords, item.latitude.map { "\($0)" } ?? "",
                      item.longitude.map { "\($0)" } ?? "", item.date.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "",
                      "\(item.rank)", attributes]
        digest = Self.fnv1a(fields.joined(separator: "\u{1E}"))
    }

    /// A 64-bit FNV-1a digest, in hex: equal items always agree, and a change is missed once in 2⁶⁴.
    static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

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
