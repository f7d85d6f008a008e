import Foundation

/// A JSON value whose objects keep their key order, so output reads in the order the contract gives.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// Compact, single-line JSON (for `jsonl`).
    var compact: String {
        var output = ""
        write(to: &output, indent: nil, level: 0)
        return output
    }

    /// Indented JSON (for `json`).
    var pretty: String {
        var output = ""
        write(to: &output, indent: "  ", level: 0)
        return output
    }

    private func write(to output: inout String, indent: String?, level: Int) {
        let newline = indent == nil ? "" : "\n"
        let pad = { (depth: Int) in indent.map { String(repeating: $0, count: depth) } ?? "" }
        switch self {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .int(let number): output += String(number)
        case .double(let number):
            if number.isFinite {
                output += number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            } else {
                output += "null"
            }
        case .string(let text): Self.escape(text, into: &output)
        case .array(let elements):
            guard !elements.isEmpty else { output += "[]"; return }
            output += "[" + newline
            for (index, element) in elements.enumerated() {
                output += pad(level + 1)
                element.write(to: &output, indent: indent, level: level + 1)
                output += (index < elements.count - 1 ? "," : "") + newline
            }
            output += pad(level) + "]"
        case .object(let members):
            guard !members.isEmpty else { output += "{}"; return }
            output += "{" + newline
            for (index, (key, value)) in members.enumerated() {
                output += pad(level + 1)
                Self.escape(key, into: &output)
                output += indent == nil ? ":" : ": "
                value.write(to: &output, indent: indent, level: level + 1)
                output += (index < members.count - 1 ? "," : "") + newline
            }
            output += pad(level) + "}"
        }
    }

    private static func escape(_ text: String, into output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                output += String(format: "\\u%04x", scalar.value)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSONValue {
    /// A string, or null.
    static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
}

extension JSONValue {
    /// The JSON text parsed into a value (object keys sorted), or nil when it is not JSON.
    init?(parsing text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else { return nil }
        self.init(foundation: object)
    }

    private init(foundation object: Any) {
        switch object {
        case let dictionary as [String: Any]:
            self = .object(dictionary.keys.sorted().map { ($0, JSONValue(foundation: dictionary[$0] ?? NSNull())) })
        case let array as [Any]: self = .array(array.map(JSONValue.init(foundation:)))
        case let text as String: self = .string(text)
        case let number as NSNumber:
            // JSON booleans come back as NSNumbers whose Objective-C type is "c" (a char), numbers as "i", "q" or "d".
            if String(cString: number.objCType) == "c" { self = .bool(number.boolValue) }
            else if number.doubleValue == number.doubleValue.rounded(), abs(number.doubleValue) < 1e15 { self = .int(number.int64Value) }
            else { self = .double(number.doubleValue) }
        default: self = .null
        }
    }
}
