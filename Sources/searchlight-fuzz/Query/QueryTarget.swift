import Foundation
import GRDB
@testable import SearchIndex

/// Fuzzes the query parser and typo tolerance (and the typo dictionary's stored chunks and placed lists' tails), and checks what they promise: every string is a query FTS5
/// accepts or a clean error, as typed and as you type; its typo expansions, ranked, are a query FTS5 accepts
/// too; the dictionary walk never strays past its edits or off the word's first letter.
///
/// Parsed queries run against an in-memory FTS5 table with the index's own tokenizer and columns, and,
/// expanded, against the index's own schema (its migrations) holding a few items, every word, prefix and
/// phrase of them listed; an error there is a crash, and so is a page the lists answer otherwise than
/// full scoring.
enum QueryTarget {
    static let database = FuzzDatabase.withTokenizer("""
        CREATE VIRTUAL TABLE items_fts USING fts5(display_name, title, text, keywords, tokenize='\(SearchTokenizer.name)');
        INSERT INTO items_fts VALUES ('Zürich', 'Tokyo 東京都', 'New York, 横浜市の港, กรุงเทพมหานคร', 'Straße');
        """)

    /// Where the index's hamlets are (within a degree), and how many: more than placed rows score in a region.
    static let cluster = (latitude: 10.0, longitude: 20.0), hamlets = Search.mostPlacedRowsScored + 200

    /// The index's schema with items whose terms crowd each other across scripts, and their dictionary.
    static let index: DatabaseQueue = {
        let queue = FuzzDatabase.withTokenizer("SELECT 1")
        do {
            try SearchIndex.migrator.migrate(queue)
            try queue.write { db in
                let names = ["Zürich", "Zurich", "Zuerich", "Zurigo", "Straße", "Strasse", "東京都", "naïve", "İstanbul", "Istanbul", "ǅemal",
                             "😀smile", "Ÿpsilon", "Berlin", "Berlino", "Bern", "Москва", "Moskva", "Moscow", "DeviceMigrationState_FD0781A4",
                             "New York", "New York City", "San Juan", "San Juan City", "Bern City"]
                try db.execute(sql: "INSERT INTO stores (id, uuid, path, token, updated_at) VALUES (1, 'S', '/s', 0, 0)")
                for (offset, name) in names.enumerated() {
                    // Places spread over both hemispheres and the antimeridian, some without a place.
                    let latitude: Double? = offset % 5 == 4 ? nil : Double(offset * 9 % 170) - 85
                    let longitude: Double? = latitude == nil ? nil : Double(offset * 37 % 360) - 180
                    try db.execute(sql: "INSERT INTO items (id, uri, store_id, entity, display_name, latitude, longitude, rank) VALUES (?, ?, 1, 'Place', ?, ?, ?, ?)",
                                   arguments: [offset + 1, "u\(offset)", name, latitude, longitude, offset])
                    if let latitude, let longitude {
                        try db.execute(sql: "INSERT INTO items_geo (id, min_lat, max_lat, min_lon, max_lon) VALUES (?, ?, ?, ?, ?)",
                                       arguments: [offset + 1, latitude, latitude, longitude, longitude])
                    }
                    try db.execute(sql: "INSERT INTO item_texts (id, title, text, keywords) VALUES (?, '', ?, '')", arguments: [offset + 1, name + " city"])
                }
                // A dense cluster of hamlets, each a `city` too: searches in it are also taken apart (typo tiers,
                // a frequent alternative), which only a region of many places is.
                for offset in 0..<Self.hamlets {
                    let id = names.count + offset + 1
                    let latitude = Self.cluster.latitude + Double(offset * 7_919 % 2_000) / 1_000 - 1
                    let longitude = Self.cluster.longitude + Double(offset * 104_729 % 2_000) / 1_000 - 1
                    try db.execute(sql: "INSERT INTO items (id, uri, store_id, entity, display_name, latitude, longitude, rank) VALUES (?, ?, 1, 'Place', 'hamlet', ?, ?, ?)",
                                   arguments: [id, "h\(offset)", latitude, longitude, offset % 7])
                    try db.execute(sql: "INSERT INTO items_geo (id, min_lat, max_lat, min_lon, max_lon) VALUES (?, ?, ?, ?, ?)",
                                   arguments: [id, latitude, latitude, longitude, longitude])
                    try db.execute(sql: "INSERT INTO item_texts (id, title, text, keywords) VALUES (?, '', 'city', '')", arguments: [id])
                    // Facet values: a text, sometimes twice or beside another, and a number or a date.
                    for text in offset % 11 == 0 ? ["farm", "farm", "mill"] : [offset % 3 == 0 ? "farm" : "mill"] {
                        try db.execute(sql: "INSERT INTO item_attributes (item_id, name, kind, number, text) VALUES (?, 'kind', 0, NULL, ?)", arguments: [id, text])
                    }
                    try db.execute(sql: "INSERT INTO item_attributes (item_id, name, kind, number, text) VALUES (?, 'kind', ?, ?, NULL)",
                                   arguments: [id, 1 + offset % 2, Double(offset % 4)])
                }
                try db.execute(sql: "INSERT INTO items_fts (items_fts) VALUES ('rebuild')")
                try TermDictionary.refresh(db)
                // Every word, prefix and phrase of the names listed: a search answered from a list must give
                // what full scoring gives.
                // Placed lists two rows deep, the rest of each key's rows in its tail.
                try TermLeaders.refresh(db, minimumDocuments: 1, listingPrefixes: true, depths: .init(word: 2, prefix: 2, mostTailRows: 1_000))
                // The cached insert keeps its last arguments, a blob whose storage Swift references through a
                // tagged enum payload that LeakSanitizer does not recognize as a pointer: dropped here, it
                // is not reported as a leak at exit.
                db.clearSchemaCache()
            }
        } catch {
            fatalError("searchlight-fuzz: cannot create the index schema: \(error)")
        }
        return queue
    }()

    static let target = FuzzTarget(name: "query", prepare: { _ = database; _ = index }) { data in
        // The input as a stored window chunk (a damaged index's row): terms, or damage, never a crash; the terms
        // encode back to the same bytes.
        if let chunk = try? data.withUnsafeBytes({ try TermWindowChunk(decoding: $0) }), chunk.encoded != Array(data) {
            // A count written longer than it needs (LEB128 with trailing zero groups) decodes the same: only a
            // canonical encoding must round-trip.
            let again = try? chunk.encoded.withUnsafeBytes { try TermWindowChunk(decoding: $0) }
            guard again == chunk else { fatalError("a chunk of \(data.count) bytes does not survive encoding: \(chunk.terms)") }
        }
        // The input as a stored placed tail (a damaged index's row): entries, or damage, never a crash; the
        // entries decoded encode to bytes that decode to them again.
        var entries: [(id: Int64, latitude: Double, longitude: Double)] = []
        _ = data.withUnsafeBytes { TermLeaders.PlacedTail.scan($0, count: 0) { entries.append(($0, $1, $2)); return true } == true }
        if !entries.isEmpty {
            var again = entries
            let bytes = TermLeaders.PlacedTail.encode(&again)
            var decoded: [(id: Int64, latitude: Double, longitude: Double)] = []
            let whole = bytes.withUnsafeBytes { TermLeaders.PlacedTail.scan($0, count: Int64(entries.count)) { decoded.append(($0, $1, $2)); return true } == true }
            guard whole, decoded.elementsEqual(entries, by: { $0 == $1 }) else { fatalError("a tail of \(data.count) bytes does not survive encoding: \(entries)") }
        }
        placesAlone(data)
        let query = String(decoding: data, as: UTF8.self)
        // As typed and as you type (the last word a prefix): both must give FTS5 a valid expression.
        for lastWordIsPrefix in [false, true] {
            guard let parsed = try? QueryParser.parse(query, lastWordIsPrefix: lastWordIsPrefix) else { continue }
            let expression = parsed.expression
            do {
                _ = try database.read { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM items_fts WHERE items_fts MATCH ?", arguments: [expression])
                }
                try index.read { db in
                    let expanded = try Search.expanded(parsed, db: db)
                    _ = try Row.fetchAll(db, sql: """
                        SELECT i.id, \(SearchIndex.rankFunction) FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ?
                        """, arguments: [expanded.phrasePlan, expanded.expression])
                    _ = try Search.suggestion(for: expanded, query: query, db: db)
                    // Words with a place: the planner's estimates and choice, and every plan giving one answer.
                    let center = try Coordinate(latitude: Double(data.count % 170) - 85, longitude: Double(data.count * 37 % 360) - 180)
                    var answers: [[String]] = []
                    for plan in [nil, SearchPlan.textThenPlace, .placeThenText, .intersection] {
                        var request = SearchRequest(query: query, near: center, radius: 8_000_000, limit: 50)
                        request.forcedPlan = plan
                        var search = Search(db: db, request: request, parsed: expanded)
                        answers.append(try search.run().hits.map(\.uri))
                    }
                    guard Set(answers.map { $0.sorted() }).count == 1 else { fatalError("plans disagree on \(query.debugDescription): \(answers)") }
                    // Words alone, a short page: leader lists (words, prefixes, phrases, typo tiers) answer
                    // exactly what scoring every match answers.
                    var pages: [[String]] = []
                    for lists in [true, false] {
                        var request = SearchRequest(query: query, limit: 3)
                        request.usesTermLeaders = lists
                        var search = Search(db: db, request: request, parsed: expanded)
                        pages.append(try search.run().hits.map { "\($0.uri) \($0.score)" })
                    }
                    guard pages[0] == pages[1] else { fatalError("leader lists change the page of \(query.debugDescription): \(pages)") }
                    // And within a wide circle, or near a point at any distance, by relevance or nearest first: placed
                    // lists, placed rows and typo tiers answer exactly what the region's plans answer.
                    for (radius, sort) in [(8_000_000, .relevance), (nil, .relevance), (nil, .distance), (300_000, .distance)] as [(Double?, SearchRequest.Sort)] {
                        var placed: [[String]] = []
                        for lists in [true, false] {
                            var request = SearchRequest(query: query, near: center, radius: radius, limit: 3)
                            request.sort = sort
                            request.usesTermLeaders = lists
                            var search = Search(db: db, request: request, parsed: expanded)
                            placed.append(try search.run().hits.map { "\($0.uri) \($0.score) \($0.distance ?? -1)" })
                        }
                        guard placed[0] == placed[1] else {
                            fatalError("placed lists change the page of \(query.debugDescription) within \(radius.map { "\($0) m" } ?? "any distance") by \(sort): \(placed)")
                        }
                    }
                    // And within the hamlets' cluster, where a word with typos or a group of alternatives is taken
                    // apart: the page of scoring it whole.
                    var dense: [[String]] = []
                    for lists in [true, false] {
                        var request = SearchRequest(query: query, near: try Coordinate(latitude: Self.cluster.latitude, longitude: Self.cluster.longitude),
                                                    radius: 200_000, limit: 5)
                        request.usesTermLeaders = lists
                        var search = Search(db: db, request: request, parsed: expanded)
                        dense.append(try search.run().hits.map { "\($0.uri) \($0.score) \($0.distance ?? -1)" })
                    }
                    guard dense[0] == dense[1] else { fatalError("taken apart, the page of \(query.debugDescription) in the cluster changes: \(dense)") }
                    // Facets over every match: looked up match by match, and counted from the attribute's column
                    // (a connection keeping columns reads it first, for a query matching as many as the hamlets).
                    var facets: [[Facet]] = []
                    for itemSets in [nil, FilterItemSets()] {
                        var request = SearchRequest(query: query, limit: 1)
                        request.facets = ["kind"]
                        request.countsTotal = true
                        var search = Search(db: db, request: request.unpaged, parsed: expanded, itemSets: itemSets)
                        facets.append(try search.totalAndFacets().facets)
                    }
                    guard facets[0] == facets[1] else { fatalError("the facet column counts \(query.debugDescription) otherwise: \(facets)") }
                }
            } catch {
                fatalError("FTS5 refuses the parsed query \(query.debugDescription): \(error)")
            }
        }
        // The walk on the raw text as one word, prefix or not, with two edits.
        let word = Array(query.unicodeScalars.prefix(40))
        guard let first = word.first else { return }
        for isPrefix in [false, true] {
            let found = try? index.read { db in
                var expander = TypoExpander(db)
                return try expander.expansions(of: String(String.UnicodeScalarView(word)), isPrefix: isPrefix, maximumEdits: 2, limit: 100)
            }
            for expansion in found ?? [] {
                let term = Array(expansion.term.unicodeScalars)
                guard term.first == first, (0...2).contains(expansion.edits), isPrefix || abs(term.count - word.count) <= 2 else {
                    fatalError("the walk from \(query.debugDescription) found \(expansion)")
                }
            }
            // A word's window, read and measured at once, finds what the walk finds, within one edit or two.
            for edits in 1...2 where !isPrefix {
                guard let window = try? index.read({ db in try TermDictionary.windowMatches(of: String(String.UnicodeScalarView(word)), edits: edits, db: db) })
                else { continue }
                let walked = try? index.read { db in
                    var expander = TypoExpander(db)
                    return try expander.expansions(of: String(String.UnicodeScalarView(word)), isPrefix: false, maximumEdits: edits, limit: .max)
                }
                guard TypoExpansion.ranked(window, word: word, isPrefix: false, limit: .max) == walked else {
                    fatalError("the window of \(query.debugDescription) within \(edits) finds otherwise than the walk")
                }
            }
        }
        // The scan over raw bytes as terms (ill-formed UTF-8 included) finds what the trie walk finds over them.
        let pieces = data.split(separator: 0x2C, omittingEmptySubsequences: false).map(Array.init)
        guard let scanned = pieces.first else { return }
        let scannedWord = Array(String(decoding: scanned, as: UTF8.self).unicodeScalars)
        let edits = scanned.count % 4
        var scan = EditDistanceScan(word: String(String.UnicodeScalarView(scannedWord)), maximumEdits: edits)
        for piece in pieces.dropFirst() { piece.withUnsafeBufferPointer { scan.add($0) } }
        // The walk keeps the word's first letter, which the scan leaves to the window it is handed.
        let sameFirst = scan.found.filter { $0.key.first == scannedWord.first }
        var walk = TypoExpander(terms: PackedTerms(pieces.dropFirst().map { String(decoding: $0, as: UTF8.self) }))
        let walked = try? walk.expansions(of: String(String.UnicodeScalarView(scannedWord)), isPrefix: false, maximumEdits: edits, limit: .max)
        guard TypoExpansion.ranked(sameFirst, word: scannedWord, isPrefix: false, limit: .max) == walked else {
            fatalError("the scan of \(data.count) bytes finds \(scan.found), the walk \(String(describing: walked))")
        }
    }

    /// Places alone, by distance, from a point and a box the bytes make (anywhere, or in the hamlets' cluster):
    /// the page picked from the R-tree's boxes is the page of every row joined to its item (an entity filter
    /// keeps a search on the join), hits and distances.
    static func placesAlone(_ data: Data) {
        let bytes = Array(data.prefix(12)) + Array(repeating: 0, count: max(0, 12 - data.count))
        let inCluster = bytes[0] & 1 == 0
        let latitude = inCluster ? Self.cluster.latitude + Double(Int(bytes[1]) - 128) / 100 : Double(bytes[1]) / 255 * 180 - 90
        let longitude = inCluster ? Self.cluster.longitude + Double(Int(bytes[2]) - 128) / 100 : Double(bytes[2]) / 255 * 360 - 180
        let radii: [Double?] = [nil, 0, 1_000, 30_000, 150_000, 5_000_000, 20_037_509]
        let radius = radii[Int(bytes[3]) % radii.count]
        let limit = 1 + Int(bytes[4]) % 60, offset = Int(bytes[5]) % 40
        do {
            var request = SearchRequest(near: try Coordinate(latitude: latitude, longitude: longitude), radius: radius, limit: limit, offset: offset)
            if bytes[6] & 3 == 0 {
                // A box around the point's neighbourhood, crossing 180° when its edges wrap.
                let (height, width) = (Double(bytes[7]) / 50, Double(bytes[8]) / 25)
                let minLongitude = (longitude - width * Double(bytes[9]) / 255 + 540).truncatingRemainder(dividingBy: 360) - 180
                request.boundingBox = try BoundingBox(minLatitude: max(-90, latitude - height / 2), minLongitude: minLongitude,
                                                      maxLatitude: min(90, latitude + height / 2),
                                                      maxLongitude: (minLongitude + width + 540).truncatingRemainder(dividingBy: 360) - 180)
                if bytes[10] & 1 == 0 { request.near = nil }
            }
            if bytes[11] & 1 == 0 { request.filter = "kind == 'farm'" }
            var joined = request
            joined.entities = ["Place"]
            try index.read { db in
                let predicate = try request.filter.map { try PredicateParser.parse($0) }
                var answers: [[String]] = []
                for asked in [request, joined] {
                    var search = Search(db: db, request: asked, parsed: nil, predicate: predicate)
                    answers.append(try search.run().hits.map { "\($0.uri) \($0.distance ?? -1)" })
                }
                guard answers[0] == answers[1] else { fatalError("picked from the R-tree, places near \(latitude),\(longitude) differ: \(answers)") }
            }
        } catch {
            fatalError("places alone near \(latitude),\(longitude): \(error)")
        }
    }
}
