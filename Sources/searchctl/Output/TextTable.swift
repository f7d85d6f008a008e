/// Renders rows as aligned columns for people (`--format table`).
///
/// On a terminal the table fits its width: the columns marked shrinkable (long names, snippets) are cut
/// with `…`, never the URIs people copy. With colour, headers are bold and `[matches]` in highlighted
/// columns are shown in bold yellow instead of brackets.
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns that may be cut to fit, most expendable first.
    var shrinkable: [Int] = []
    /// Columns whose `[…]` marks are matches to highlight.
    var highlighted: Set<Int> = []

    /// The table as text, at most `width` columns wide when it can be (nil: as wide as it needs).
    func render(width: Int? = nil, color: Bool = false) -> String {
        let headers = headers.map(\.terminalSafe)
        let rows = rows.map { $0.map(\.terminalSafe) }
        var widths = headers.indices.map { column in
            ([headers[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.displayWidth).max() ?? 0
        }
        if let width {
            var excess = widths.reduce(0, +) + 2 * (widths.count - 1) - width
            for column in shrinkable where excess > 0 && column < widths.count {
                let floor = max(8, headers[column].displayWidth)
                let cut = min(excess, max(0, widths[column] - floor))
                widths[column] -= cut
                excess -= cut
            }
        }
        func line(_ cells: [String], header: Bool) -> String {
            let rendered = cells.enumerated().map { index, cell -> String in
                let text = cell.displayWidth > widths[index] ? cell.truncated(toWidth: widths[index]) : cell
                var shown = text
                if color && header { shown = "\u{1B}[1m" + text + "\u{1B}[0m" }
                if color && !header && highlighted.contains(index) { shown = Self.highlight(text) }
                let visible = highlighted.contains(index) && color && !header ? text.displayWidth - Self.markCount(text) : text.displayWidth
                return index == cells.count - 1 ? shown : shown + String(repeating: " ", count: max(0, widths[index] - visible))
            }
            return rendered.joined(separator: "  ")
        }
        return ([line(headers, header: true)] + rows.map { line($0, header: false) }).joined(separator: "\n")
    }

    /// `[match]` → bold yellow `match`; an unclosed mark (cut by truncation) ends with the cell.
    static func highlight(_ text: String) -> String {
        var result = ""
        var open = false
        for character in text {
            switch character {
            case "[": result += "\u{1B}[1;33m"; open = true
            case "]" where open: result += "\u{1B}[0m"; open = false
            default: result.append(character)
            }
        }
        return open ? result + "\u{1B}[0m" : result
    }

    /// The bracket characters `highlight` removes.
    static func markCount(_ text: String) -> Int {
        var count = 0
        var open = false
        for character in text {
            if character == "[" { count += 1; open = true } else if character == "]" && open { count += 1; open = false }
        }
        return count
    }
}

extension String {
    /// Columns the text occupies in a terminal: East Asian wide characters take two.
    var displayWidth: Int {
        unicodeScalars.reduce(0) { width, scalar in width + scalar.displayWidth }
    }

    /// The longest prefix that fits `width` columns with a trailing `…`.
    func truncated(toWidth width: Int) -> String {
        guard width > 0 else { return "" }
        var result = ""
        var used = 0
        for character in self {
            let characterWidth = String(character).displayWidth
            if used + characterWidth > width - 1 { break }
            result.append(character)
            used += characterWidth
        }
        return result + "…"
    }
}

extension Unicode.Scalar {
    var displayWidth: Int {
        switch value {
        case 0x0300...0x036F, 0x200B...0x200F: 0 // combining marks and zero-width spaces
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD: 2
        default: 1
        }
    }
}
