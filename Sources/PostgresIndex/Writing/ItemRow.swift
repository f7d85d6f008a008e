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

    /// The row of a prepared item: its joined texts, attributes, value lengths and tokens are the ones the
    /// SQLite index writes, made once.
    init(_ prepared: PreparedItem) {
        var prepared = prepared
        prepared.tokenize()
        var item = prepared.item
        // As the SQLite index: a place only when both coordinates are valid.
        if !item.hasLocation { (item.latitude, item.longitude) = (nil, nil) }
        self.item = item
        text = prepared.text
        keywords = prepared.keywords
        attributes = prepared.attributes
        valueLengths = prepared.tokens?.valueLengths ?? ""
        vector = TermVector(prepared)
        attributeRows = item.attributes.sorted { $0.key < $1.key }.flatMap { name, values in values.filter(\.isFinite).map { (name, $0) } }
        // Every stored field, in a fixed order; a field separator that cannot occur in the joined texts.
        let fields = [item.entity, item.displayName, item.title, text, keywords, item.latitude.map { "\($0)" } ?? "",
                      item.longitude.map { "\($0)" } ?? "", item.date.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "",
                      "\(item.rank)", attributes]
        digest = FNV1a.hex(fields.joined(separator: "\u{1E}"))
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
