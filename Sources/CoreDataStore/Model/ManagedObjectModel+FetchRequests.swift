import Foundation

extension ManagedObjectModel {
    /// The fetch-request templates of an archived model (`NSFetchRequestTemplates`: name → `NSFetchRequest`),
    /// each predicate written back in `NSPredicate` format. A template whose predicate holds what cannot be
    /// written back (a subquery, a block, a function other than a key path on a variable) is left out rather
    /// than offered wider than it is.
    static func fetchRequestTemplates(in archive: KeyedArchive, model root: PropertyListValue) -> [FetchRequestTemplate] {
        // One budget for every template: many templates sharing one deep predicate cost it once.
        var budget = visitBudget
        return archive.dictionary(root, "NSFetchRequestTemplates").compactMap { name, request in
            guard let entity = archive.string(archive.resolve(request["NSEntity"]), "NSEntityName") else { return nil }
            guard let predicate = archive.resolve(request["NSPredicate"]) else {
                return FetchRequestTemplate(name: name, entityName: entity, predicate: nil)
            }
            return predicateFormat(predicate, archive: archive, depth: 0, budget: &budget).map { FetchRequestTemplate(name: name, entityName: entity, predicate: $0) }
        }.sorted { $0.name < $1.name }
    }

    /// An archived `NSPredicate` in `NSPredicate` format, or nil when part of it has no such form here.
    static func predicateFormat(_ predicate: PropertyListValue, archive: KeyedArchive) -> String? {
        var budget = visitBudget
        return predicateFormat(predicate, archive: archive, depth: 0, budget: &budget)
    }

    /// The archived objects one model's predicates may visit in all.
    private static let visitBudget = 10_000

    /// A hostile archive may nest without end, point back at itself, or share children so that a walk
    /// doubles at every level: depth and the number of objects visited are both bounded.
    private static func visit(_ depth: Int, _ budget: inout Int) -> Bool {
        budget -= 1
        return depth < 32 && budget > 0
    }

    private static func predicateFormat(_ predicate: PropertyListValue, archive: KeyedArchive, depth: Int, budget: inout Int) -> String? {
        guard visit(depth, &budget) else { return nil }
        switch archive.className(of: predicate) {
        case "NSTruePredicate": return "TRUEPREDICATE"
        case "NSFalsePredicate": return "FALSEPREDICATE"
        case "NSCompoundPredicate":
            var written: [String] = []
            for part in archive.array(predicate, "NSSubpredicates") {
                guard let format = predicateFormat(part, archive: archive, depth: depth + 1, budget: &budget) else { return nil }
                written.append("(\(format))")
            }
            guard !written.isEmpty else { return nil }
            switch predicate["NSCompoundPredicateType"]?.integerValue {
            case 0: return written.count == 1 ? "NOT " + written[0] : nil
            case 1: return written.joined(separator: " AND ")
            case 2: return written.joined(separator: " OR ")
            default: return nil
            }
        case "NSComparisonPredicate":
            guard let left = expressionFormat(archive.resolve(predicate["NSLeftExpression"]), archive: archive, depth: depth + 1, budget: &budget),
                  let right = expressionFormat(archive.resolve(predicate["NSRightExpression"]), archive: archive, depth: depth + 1, budget: &budget),
                  let comparison = archive.resolve(predicate["NSPredicateOperator"]),
                  let type = comparison["NSOperatorType"]?.integerValue else { return nil }
            let symbols: [Int64: String] = [0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "MATCHES", 7: "LIKE", 8: "BEGINSWITH",
                                            9: "ENDSWITH", 10: "IN", 99: "CONTAINS", 100: "BETWEEN"]
            guard var symbol = symbols[type] else { return nil }
            if comparison["NSNegate"]?.boolValue == true {
                guard type == 4 else { return nil }
                symbol = "!="
            }
            // Options: 1 case-, 2 diacritic-insensitive; archived as NSOptions, or NSFlags by some operators.
            let options = comparison["NSOptions"]?.integerValue ?? comparison["NSFlags"]?.integerValue ?? 0
            let modifier = (options & 1 != 0 ? "c" : "") + (options & 2 != 0 ? "d" : "")
            // ANY (2) is how the index matches an attribute's several values anyway, so it is written as a
            // plain comparison, which the index's filters read; ALL (1) they cannot say.
            let quantifier = comparison["NSModifier"]?.integerValue ?? 0
            guard quantifier == 0 || quantifier == 2 else { return nil }
            return left + " " + symbol + (modifier.isEmpty ? "" : "[\(modifier)]") + " " + right
        default:
            return nil
        }
    }

    /// An archived `NSExpression` in format syntax: constants, `$VARIABLES`, key paths (also on a variable),
    /// and collections of those.
    private static func expressionFormat(_ expression: PropertyListValue?, archive: KeyedArchive, depth: Int, budget: inout Int) -> String? {
        guard let expression, visit(depth, &budget) else { return nil }
        switch expression["NSExpressionType"]?.integerValue {
        case 0:  // constant
            return constantFormat(archive.resolve(expression["NSConstantValue"]), archive: archive, depth: depth + 1, budget: &budget)
        case 2:  // variable
            return archive.string(expression, "NSVariable").map { "$" + $0 }
        case 3, 4:  // key path, or valueForKeyPath: on an operand (any other function is not a key path)
            if expression["NSExpressionType"]?.integerValue == 4,
               !["valueForKeyPath:", "valueForKey:"].contains(archive.string(expression, "NSSelectorName")) { return nil }
            let arguments = archive.array(expression, "NSArguments")
            guard arguments.count == 1, let path = archive.string(arguments[0], "NSKeyPath") ?? arguments[0].stringValue else { return nil }
            let operand = archive.resolve(expression["NSOperand"])
            switch operand?["NSExpressionType"]?.integerValue {
            case 1?, nil: return path  // SELF
            case 2?: return archive.string(operand, "NSVariable").map { "$\($0).\(path)" }
            default: return nil
            }
        case 10:  // key path specifier
            return archive.string(expression, "NSKeyPath")
        case 14:  // aggregate: {a, b}
            var parts: [String] = []
            for part in archive.array(expression, "NSCollection") {
                guard let written = expressionFormat(part, archive: archive, depth: depth + 1, budget: &budget) else { return nil }
                parts.append(written)
            }
            return "{" + parts.joined(separator: ", ") + "}"
        default:
            return nil
        }
    }

    private static func constantFormat(_ value: PropertyListValue?, archive: KeyedArchive, depth: Int, budget: inout Int) -> String? {
        guard visit(depth, &budget) else { return nil }
        guard let value else { return "nil" }
        switch value {
        case .string(let text): return predicateString(text)
        case .integer(let number): return String(number)
        case .real(let number): return number.isFinite ? "\(number)" : nil
        case .bool(let flag): return flag ? "YES" : "NO"
        default:
            switch archive.className(of: value) {
            case "NSDate": return value["NS.time"]?.doubleValue.map { "CAST(\($0), 'NSDate')" }
            case "NSString", "NSMutableString": return archive.string(value, "NS.string").map(predicateString)
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet":
                var parts: [String] = []
                for element in archive.elements(of: value) {
                    guard let written = constantFormat(element, archive: archive, depth: depth + 1, budget: &budget) else { return nil }
                    parts.append(written)
                }
                return "{" + parts.joined(separator: ", ") + "}"
            default: return nil
            }
        }
    }

    private static func predicateString(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
