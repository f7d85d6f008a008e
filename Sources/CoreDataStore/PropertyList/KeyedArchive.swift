import Foundation

/// A decoded `NSKeyedArchiver` archive, read by following its `CF$UID` references into `$objects`.
///
/// Core Data archives the `NSManagedObjectModel` into `Z_MODELCACHE` this way. No class is instantiated:
/// callers walk the object graph by key, which is all a reader of the model needs and keeps hostile
/// archives harmless.
package struct KeyedArchive: Sendable {
    /// Why an archive could not be read.
    package struct DecodingError: Error, CustomStringConvertible, Sendable {
        /// What is wrong with the archive.
        package var reason: String
        package var description: String { "invalid keyed archive: \(reason)" }
    }

    /// The archive's `$objects`; index 0 is `$null`.
    package let objects: [PropertyListValue]
    /// The archive's `$top` dictionary.
    package let top: [String: PropertyListValue]

    /// Reads an archive from binary plist bytes.
    package init(data: Data) throws {
        let plist = try BinaryPropertyList.decode(data)
        guard plist["$archiver"]?.stringValue == "NSKeyedArchiver",
              let objects = plist["$objects"]?.arrayValue,
              let top = plist["$top"]?.dictionaryValue
        else { throw DecodingError(reason: "not an NSKeyedArchiver archive") }
        self.objects = objects
        self.top = top
    }

    /// The root object (`$top.root`).
    package var root: PropertyListValue? { resolve(top["root"]) }

    /// Follows a UID reference; returns plain values unchanged and `nil` for `$null` or dangling UIDs.
    package func resolve(_ value: PropertyListValue?) -> PropertyListValue? {
        guard let value else { return nil }
        guard case .uid(let index) = value else { return value }
        guard index > 0, index < UInt64(objects.count) else { return nil }
        return objects[Int(index)]
    }

    /// The class name of an archived object (its `$class` entry's `$classname`).
    package func className(of object: PropertyListValue?) -> String? {
        resolve(object?["$class"])?["$classname"]?.stringValue
    }

    /// The string stored under `key` of an archived object.
    package func string(_ object: PropertyListValue?, _ key: String) -> String? {
        resolve(object?[key])?.stringValue
    }

    /// The elements of an archived `NSArray`/`NSSet`/`NSOrderedSet` under `key`, resolved.
    package func array(_ object: PropertyListValue?, _ key: String) -> [PropertyListValue] {
        elements(of: resolve(object?[key]))
    }

    /// The elements of an archived collection object, resolved.
    package func elements(of collection: PropertyListValue?) -> [PropertyListValue] {
        guard let collection else { return [] }
        if let plain = collection.arrayValue { return plain.compactMap { resolve($0) } }
        return (collection["NS.objects"]?.arrayValue ?? []).compactMap { resolve($0) }
    }

    /// The entries of an archived dictionary under `key`, resolved, in archive order.
    ///
    /// Understands `NSDictionary` (`NS.keys`/`NS.objects`) and Core Data's `NSKnownKeysDictionary1`
    /// (`values` paired with `searchMapping.keys`).
    package func dictionary(_ object: PropertyListValue?, _ key: String) -> [(key: String, value: PropertyListValue)] {
        guard let dictionary = resolve(object?[key]) else { return [] }
        let keys: [PropertyListValue]
        let values: [PropertyListValue]
        if dictionary["NS.keys"] != nil {
            keys = dictionary["NS.keys"]?.arrayValue ?? []
            values = dictionary["NS.objects"]?.arrayValue ?? []
        } else if let mapping = resolve(dictionary["searchMapping"]) {
            keys = elements(of: resolve(mapping["keys"]))
            values = elements(of: resolve(dictionary["values"]))
        } else if let plain = dictionary.dictionaryValue?.filter({ $0.key != "$class" }) {
            return plain.sorted { $0.key < $1.key }.compactMap { entry in resolve(entry.value).map { (entry.key, $0) } }
        } else {
            return []
        }
        return zip(keys, values).compactMap { key, value in
            guard let name = resolve(key)?.stringValue, let resolved = resolve(value) else { return nil }
            return (name, resolved)
        }
    }
}

/// Builds an `NSKeyedArchiver`-format archive, object by object.
///
/// Used by the store writer to put a model archive into `Z_MODELCACHE`, in the same shape Core Data
/// uses, so that a store created by Searchlight carries its own model like an Apple-written one.
package struct KeyedArchiveBuilder: Sendable {
    private var objects: [PropertyListValue] = [.string("$null")]
    private var classes: [String: UInt64] = [:]
    private var strings: [String: UInt64] = [:]

    /// Creates an empty archive.
    package init() {}

    /// Reserves a slot for an object whose fields are filled later (for reference cycles).
    package mutating func reserve() -> PropertyListValue {
        objects.append(.null)
        return .uid(UInt64(objects.count - 1))
    }

    /// Fills a reserved slot with an object of the given class hierarchy.
    package mutating func fill(_ slot: PropertyListValue, className: [String], fields: [String: PropertyListValue]) {
        guard case .uid(let index) = slot else { return }
        var fields = fields
        fields["$class"] = classReference(className)
        objects[Int(index)] = .dictionary(fields)
    }

    /// Appends an object of the given class hierarchy (most specific first, ending with `NSObject`).
    package mutating func add(className: [String], fields: [String: PropertyListValue]) -> PropertyListValue {
        let slot = reserve()
        fill(slot, className: className, fields: fields)
        return slot
    }

    /// Appends (or reuses) a string object.
    package mutating func add(string: String) -> PropertyListValue {
        if let existing = strings[string] { return .uid(existing) }
        objects.append(.string(string))
        strings[string] = UInt64(objects.count - 1)
        return .uid(UInt64(objects.count - 1))
    }

    /// Appends an `NSArray` of references.
    package mutating func add(array: [PropertyListValue], className: String = "NSArray") -> PropertyListValue {
        add(className: [className, "NSObject"], fields: ["NS.objects": .array(array)])
    }

    /// Appends an `NSDictionary` with string keys, in the given order.
    package mutating func add(dictionary entries: [(String, PropertyListValue)]) -> PropertyListValue {
        let keys = entries.map { add(string: $0.0) }
        return add(className: ["NSDictionary", "NSObject"],
                   fields: ["NS.keys": .array(keys), "NS.objects": .array(entries.map(\.1))])
    }

    private mutating func classReference(_ hierarchy: [String]) -> PropertyListValue {
        let name = hierarchy.first ?? "NSObject"
        if let existing = classes[name] { return .uid(existing) }
        objects.append(.dictionary([
            "$classname": .string(name),
            "$classes": .array(hierarchy.map(PropertyListValue.string)),
        ]))
        classes[name] = UInt64(objects.count - 1)
        return .uid(UInt64(objects.count - 1))
    }

    /// The archive as binary plist bytes, with `root` as its root object.
    package func encoded(root: PropertyListValue) -> Data {
        BinaryPropertyList.encode(.dictionary([
            "$version": .integer(100000),
            "$archiver": .string("NSKeyedArchiver"),
            "$top": .dictionary(["root": root]),
            "$objects": .array(objects),
        ]))
    }
}
