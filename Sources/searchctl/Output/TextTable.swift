/// Renders rows as aligned columns for people (`--format table`).
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []

    func render() -> String {
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.displayWidth).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell + String(repeating: " ", count: max(0, widths[index] - cell.displayWidth))
            }.joined(separator: "  ")
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}

extension String {
    /// Columns the text occupies in a terminal: East Asian wide characters take two.
    var displayWidth: Int {
        unicodeScalars.reduce(0) { width, scalar in
            switch scalar.value {
            case 0x0300...0x036F, 0x200B...0x200F: width // combining marks and zero-width spaces
            case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
                 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD: width + 2
            default: width + 1
            }
        }
    }
}
