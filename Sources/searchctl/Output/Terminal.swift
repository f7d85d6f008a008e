#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// What the terminal on the other end of stdout/stderr can do: decorations are for people only.
enum Terminal {
    /// Whether the file descriptor is a terminal (not a pipe or a file).
    static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// Columns of the terminal on `descriptor`; `$COLUMNS` when it is not a terminal but says so; nil otherwise.
    static func width(_ descriptor: Int32) -> Int? {
        var size = winsize()
        if isTerminal(descriptor), ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return nil
    }

    /// Colour only on a terminal, never with `NO_COLOR` set (https://no-color.org) or `TERM=dumb`.
    static func usesColor(_ descriptor: Int32) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return isTerminal(descriptor) && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }
}

extension String {
    /// The text with every control character (C0, DEL, C1) and bidirectional override shown as an escape
    /// (`\u{1B}`, `\n`): data from a store can never move the cursor, retitle the window, hide text or
    /// start a new output line.
    var terminalSafe: String {
        guard unicodeScalars.contains(where: \.isUnsafeOnTerminal) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            result += scalar.isUnsafeOnTerminal ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return result
    }
}

extension Unicode.Scalar {
    /// Control characters and the bidirectional controls that reorder what a terminal shows.
    var isUnsafeOnTerminal: Bool {
        properties.generalCategory == .control || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
            || value == 0x200E || value == 0x200F || value == 0x061C
    }
}

extension Int {
    /// The number with thousands separators (`235,160`), the same in every locale so output stays stable.
    var grouped: String {
        let digits = String(magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return self < 0 ? "-" + result : result
    }
}

extension TextTable {
    /// Rendered for standard output: fitted to the terminal's width, coloured when colour is welcome.
    func renderForStandardOutput() -> String {
        render(width: Terminal.width(STDOUT_FILENO), color: Terminal.usesColor(STDOUT_FILENO))
    }
}
