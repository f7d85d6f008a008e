import CSearchTokenizer
import Foundation
@testable import PostgresIndex
@testable import SearchIndex

/// Fuzzes what the PostgreSQL backend makes of outside text: index locations (`--index postgres://…`),
/// documents turned into `tsvector` literals and queries turned into `tsquery` literals — text that
/// PostgreSQL parses, where one stray quote would be an error or a different query — and the instances
/// a row's positions give a query.
///
/// The first line is a location, the rest is both a document (its four columns split at tabs) and a query.
enum PostgresTarget {
    static let target = FuzzTarget(name: "postgres") { data in
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        if let location = try? PostgresLocation(lines[0]) {
            guard !location.host.isEmpty, !location.user.isEmpty, !location.database.isEmpty, (1...65_535).contains(location.port) else {
                fatalError("accepted an incomplete location: \(lines[0])")
            }
            guard location.description == "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)" else {
                fatalError("a location's description is not its user, host, port and database: \(location.description)")
            }
            // PostgreSQL's startup message ends each name at a NUL: a control character must never get through.
            for name in [location.user, location.database, location.host, location.password ?? ""] where name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                fatalError("a control character in a location's name: \(name.debugDescription)")
            }
        }
        let body = lines.count > 1 ? lines[1] : lines[0]
        var columns = body.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        while columns.count < 4 { columns.append("") }
        // The document as an item with one text value and one keyword, prepared as both backends write it.
        let prepared = PreparedItem(IndexedItem(uri: "x-coredata://S/E/p1", entity: "E", displayName: columns[0], title: columns[1],
                                                text: [columns[2]], keywords: [columns[3]]))
        let vector = TermVector(prepared)
        // The prepared streams replay exactly what tokenizing the texts gives, and the columns' sizes are the
        // ones the SQLite index's value lengths record (the ranking reads those).
        let texts = [columns[0], columns[1], prepared.text, prepared.keywords]
        let direct = TermVector(columns: texts.map { SearchTokenizer.tokens(in: $0, withParts: true) })
        guard direct.literal == vector.literal, direct.columnSizes == vector.columnSizes else {
            fatalError("a prepared stream's tokens differ from the text's: \(vector.literal.debugDescription) vs \(direct.literal.debugDescription)")
        }
        var sizes = [Int32](repeating: 0, count: 4)
        let lengths = prepared.tokens?.valueLengths ?? ""
        if sizes.withUnsafeMutableBufferPointer({ searchlight_value_lengths_sizes(lengths, $0.baseAddress) }) == 1,
           sizes.map(Int.init) != vector.columnSizes {
            fatalError("value lengths \(lengths) disagree with the vector's column sizes \(vector.columnSizes)")
        }
        let lexemes = checkVector(vector.literal)
        for lastWordIsPrefix in [false, true] {
            guard let parsed = try? QueryParser.parse(body, lastWordIsPrefix: lastWordIsPrefix) else { continue }
            let query = TextQuery(parsed)
            if let tsquery = query.tsquery { checkQuery(tsquery) }
            // The document's own positions, read back as the search reads them, must give instances that
            // lie inside the columns.
            let terms = TextQuery.RowTerms(lexemes: lexemes.map(\.lexeme), positions: lexemes.map { $0.positions.map(String.init).joined(separator: ",") },
                                           weights: lexemes.map { String($0.weights) })
            if let instances = query.instances(in: terms, columnSizes: vector.columnSizes) {
                for instance in instances {
                    guard instance.column >= 0, instance.column < 4, instance.offset >= 0,
                          Int(instance.offset) < max(1, vector.columnSizes[Int(instance.column)]) || Int(instance.offset) >= TermVector.maximumPosition - 1 else {
                        fatalError("an instance outside its column: \(instance) sizes \(vector.columnSizes)")
                    }
                }
            }
        }
    }

    /// Parses a tsvector literal as PostgreSQL would and checks what PostgreSQL requires of it: quoted
    /// lexemes of at most 2,046 bytes, positions 1…16,383 sorted and distinct, at most 256 per lexeme,
    /// weights A–D.
    static func checkVector(_ literal: String) -> [(lexeme: String, positions: [Int], weights: [Character])] {
        var result: [(lexeme: String, positions: [Int], weights: [Character])] = []
        var scalars = Array(literal.unicodeScalars)[...]
        while !scalars.isEmpty {
            guard scalars.popFirst() == "'" else { fatalError("a lexeme not quoted in \(literal.debugDescription)") }
            let lexeme = readQuoted(&scalars, in: literal)
            guard lexeme.utf8.count <= TermVector.maximumLexemeBytes, !lexeme.isEmpty else { fatalError("a lexeme PostgreSQL refuses: \(lexeme.utf8.count) bytes") }
            guard scalars.popFirst() == ":" else { fatalError("a lexeme without positions in \(literal.debugDescription)") }
            var positions: [Int] = [], weights: [Character] = []
            while let next = scalars.first, next != " " {
                var digits = ""
                while let digit = scalars.first, ("0"..."9").contains(digit) { digits.unicodeScalars.append(digit); scalars.removeFirst() }
                guard let position = Int(digits), (1...TermVector.maximumPosition).contains(position),
                      let weight = scalars.popFirst(), "ABCD".unicodeScalars.contains(weight) else { fatalError("a bad position in \(literal.debugDescription)") }
                positions.append(position)
                weights.append(Character(weight))
                if scalars.first == "," { scalars.removeFirst() }
            }
            guard positions == positions.sorted(), Set(positions).count == positions.count, positions.count <= TermVector.maximumPositionsPerLexeme else {
                fatalError("positions PostgreSQL would reorder or drop: \(positions)")
            }
            result.append((lexeme, positions, weights))
            if scalars.first == " " { scalars.removeFirst() }
        }
        return result
    }

    /// Reads a quoted lexeme's text after its opening quote, through its closing one.
    static func readQuoted(_ scalars: inout ArraySlice<Unicode.Scalar>, in literal: String) -> String {
        var lexeme = String.UnicodeScalarView()
        while true {
            guard let scalar = scalars.popFirst() else { fatalError("an unterminated lexeme in \(literal.debugDescription)") }
            if scalar == "'" || scalar == "\\" {
                if scalars.first == scalar { scalars.removeFirst(); lexeme.append(scalar); continue }
                guard scalar == "'" else { fatalError("a lone backslash in \(literal.debugDescription)") }
                return String(lexeme)
            }
            lexeme.append(scalar)
        }
    }

    /// Checks a tsquery literal's grammar: quoted lexemes with an optional `:*`, joined by `&`, `|`, `<->`,
    /// `!` and balanced parentheses.
    static func checkQuery(_ literal: String) {
        var scalars = Array(literal.unicodeScalars)[...]
        var depth = 0
        var expectsOperand = true
        while let scalar = scalars.popFirst() {
            switch scalar {
            case " ": continue
            case "(" where expectsOperand: depth += 1
            case "!" where expectsOperand: continue
            case ")" where !expectsOperand:
                depth -= 1
                guard depth >= 0 else { fatalError("unbalanced parentheses in \(literal.debugDescription)") }
            case "'" where expectsOperand:
                guard !readQuoted(&scalars, in: literal).isEmpty else { fatalError("an empty lexeme in \(literal.debugDescription)") }
                if scalars.first == ":" {
                    scalars.removeFirst()
                    guard scalars.popFirst() == "*" else { fatalError("a bad prefix mark in \(literal.debugDescription)") }
                }
                expectsOperand = false
            case "&" where !expectsOperand, "|" where !expectsOperand: expectsOperand = true
            case "<" where !expectsOperand:
                guard scalars.popFirst() == "-", scalars.popFirst() == ">" else { fatalError("a bad phrase operator in \(literal.debugDescription)") }
                expectsOperand = true
            default:
                fatalError("unexpected '\(scalar)' in \(literal.debugDescription)")
            }
        }
        guard depth == 0, !expectsOperand else { fatalError("an incomplete query: \(literal.debugDescription)") }
    }
}
