import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

extension ManagedObjectModel {
    /// The largest model `contents` file read: 64 MiB, far beyond any real model (the largest here is 57 KB).
    static let maximumModelFileSize = 64 << 20

    /// Reads an Xcode model: a `.xcdatamodeld` bundle (its current version), a `.xcdatamodel` folder,
    /// or a `contents` XML file.
    public init(contentsOf path: String) throws(CoreDataStoreError) {
        let contents = try Self.contentsFile(for: path)
        let data: Data
        do {
            data = try RegularFile.read(contents, limit: Self.maximumModelFileSize, whole: true)
        } catch {
            switch error {
            case .missing: throw .fileNotFound(path: contents)
            case .notRegular(let kind): throw .invalidModelFile(path: contents, reason: "it is \(kind), not a regular file")
            case .unreadable(let reason): throw .invalidModelFile(path: contents, reason: "the file cannot be read (\(reason))")
            case .tooLarge(let limit): throw .invalidModelFile(path: contents, reason: "the file is larger than \(limit >> 20) MiB")
            }
        }
        try self.init(modelFileXML: data, path: path)
    }

    /// Parses the XML of a `.xcdatamodel/contents` file.
    public init(modelFileXML data: Data, path: String = "contents") throws(CoreDataStoreError) {
        let tree = try XMLTree.parse(data, path: path)
        guard tree.name == "model" else {
            throw .invalidModelFile(path: path, reason: "the root element is <\(tree.name)>, not <model>")
        }
        let composites = Dictionary(
            tree.children(named: "composite").compactMap { node in
                node["name"].map { ($0, node.children(named: "attribute").compactMap { Self.attribute($0, composites: [:]) }) }
            },
            uniquingKeysWith: { first, _ in first })
        let entities = tree.children(named: "entity").map { Self.entity($0, composites: composites) }
        let identifiers = tree["userDefinedModelVersionIdentifier"].map { [$0] } ?? []
        do {
            try self.init(entities: entities, versionIdentifiers: identifiers, source: .modelFile(path: path))
        } catch {
            throw .invalidModelFile(path: path, reason: "\(error)")
        }
        // Top-level <fetchRequest> elements only: those inside an entity belong to fetched properties.
        fetchRequestTemplates = tree.children(named: "fetchRequest").compactMap { node in
            guard let name = node["name"], let entity = node["entity"] else { return nil }
            return FetchRequestTemplate(name: name, entityName: entity, predicate: node["predicateString"])
        }
    }

    /// Finds the `contents` file a model path designates.
    static func contentsFile(for path: String) throws(CoreDataStoreError) -> String {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .fileNotFound(path: path)
        }
        guard isDirectory.boolValue else { return path }
        let url = URL(fileURLWithPath: path)
        if url.pathExtension == "xcdatamodeld" {
            let versions = ((try? manager.contentsOfDirectory(atPath: path)) ?? [])
                .filter { $0.hasSuffix(".xcdatamodel") }
                .sorted { $0.localizedStandardCompare($1) == .orderedAscending }
            var current: String?
            if let plistData = try? RegularFile.read(url.appendingPathComponent(".xccurrentversion").path, limit: 1 << 20, whole: true),
               let plist = try? PropertyListSerialization.propertyList(from: plistData, format: nil) as? [String: Any],
               let name = plist["_XCCurrentVersionName"] as? String, !name.isEmpty {
                current = name
            }
            // Real bundles sometimes lack .xccurrentversion or leave it empty: then the newest-named version.
            guard let version = current ?? versions.last else {
                throw .invalidModelFile(path: path, reason: "the bundle holds no .xcdatamodel version")
            }
            guard versions.contains(version) else {
                throw .invalidModelFile(path: path, reason: ".xccurrentversion names \(version), which the bundle does not hold")
            }
            return url.appendingPathComponent(version).appendingPathComponent("contents").path
        }
        let contents = url.appendingPathComponent("contents").path
        guard manager.fileExists(atPath: contents) else {
            throw .invalidModelFile(path: path, reason: "the folder has no contents file")
        }
        return contents
    }

    private static func flag(_ value: String?) -> Bool { value == "YES" }

    private static func userInfo(_ node: XMLTree) -> [String: String] {
        var info: [String: String] = [:]
        for entry in node.children(named: "userInfo").flatMap({ $0.children(named: "entry") }) {
            if let key = entry["key"] { info[key] = entry["value"] ?? "" }
        }
        return info
    }

    private static func entity(_ node: XMLTree, composites: [String: [AttributeDescription]]) -> EntityDescription {
        let name = node["name"] ?? ""
        let fetchIndexes = node.children(named: "fetchIndex").map { index in
            FetchIndexDescription(
                name: index["name"] ?? "",
                elements: index.children(named: "fetchIndexElement").compactMap { element in
                    guard let property = element["property"] else { return nil } // expression elements: no column
                    return FetchIndexDescription.Element(
                        propertyName: property,
                        isRTree: element["type"]?.lowercased() == "rtree",
                        isAscending: element["order"] != "descending")
                })
        }
        let uniqueness = node.children(named: "uniquenessConstraints")
            .flatMap { $0.children(named: "uniquenessConstraint") }
            .map { $0.children(named: "constraint").compactMap { $0["value"] } }
        return EntityDescription(
            name: name,
            superentityName: node["parentEntity"],
            isAbstract: flag(node["isAbstract"]),
            attributes: node.children(named: "attribute").compactMap { attribute($0, composites: composites) },
            relationships: node.children(named: "relationship").compactMap(relationship),
            fetchedPropertyNames: node.children(named: "fetchedProperty").compactMap { $0["name"] },
            fetchIndexes: fetchIndexes,
            uniquenessConstraints: uniqueness,
            renamingIdentifier: renaming(node),
            userInfo: userInfo(node))
    }

    /// `elementID` marks a rename only when it differs from the current name.
    private static func renaming(_ node: XMLTree) -> String? {
        node["elementID"].flatMap { $0 == node["name"] ? nil : $0 }
    }

    private static func attribute(_ node: XMLTree, composites: [String: [AttributeDescription]]) -> AttributeDescription? {
        guard let name = node["name"] else { return nil }
        let type = node["attributeType"].flatMap(AttributeType.init(modelFileName:)) ?? .undefined
        return AttributeDescription(
            name: name,
            type: type,
            isOptional: flag(node["optional"]),
            isTransient: flag(node["transient"]),
            isDerived: flag(node["derived"]),
            derivationExpression: node["derivationExpression"],
            defaultValue: node["defaultValueString"],
            valueTransformerName: node["valueTransformerName"],
            isIndexedBySpotlight: flag(node["spotlightIndexingEnabled"]),
            preservesValueInHistoryOnDeletion: flag(node["preserveAfterDeletion"]),
            allowsExternalBinaryDataStorage: flag(node["allowsExternalBinaryDataStorage"]),
            renamingIdentifier: renaming(node),
            compositeElements: type == .composite ? (node["composite"].flatMap { composites[$0] } ?? []) : [],
            userInfo: userInfo(node))
    }

    private static func relationship(_ node: XMLTree) -> RelationshipDescription? {
        guard let name = node["name"], let destination = node["destinationEntity"] else { return nil }
        let toMany = flag(node["toMany"])
        return RelationshipDescription(
            name: name,
            destinationEntityName: destination,
            inverseName: node["inverseName"],
            isToMany: toMany,
            isOrdered: flag(node["ordered"]),
            isOptional: flag(node["optional"]),
            isTransient: flag(node["transient"]),
            minCount: node["minCount"].flatMap { Int($0) } ?? 0,
            maxCount: node["maxCount"].flatMap { Int($0) } ?? (toMany ? 0 : 1),
            deleteRule: RelationshipDescription.DeleteRule(modelFileName: node["deletionRule"]),
            isIndexedBySpotlight: flag(node["spotlightIndexingEnabled"]),
            renamingIdentifier: renaming(node),
            userInfo: userInfo(node))
    }
}

/// A minimal XML element tree: enough for `.xcdatamodel/contents`, which is attributes-only XML.
struct XMLTree {
    var name: String
    var attributes: [String: String]
    var children: [XMLTree]

    subscript(attribute: String) -> String? { attributes[attribute] }

    func children(named name: String) -> [XMLTree] { children.filter { $0.name == name } }

    /// The deepest element nesting read: real model files nest five deep (model, entity, attribute,
    /// userInfo, entry); a deeper file is hostile or not a model.
    static let maximumDepth = 64
    /// The most elements read: 50× the largest real model seen here.
    static let maximumElements = 200_000

    static func parse(_ data: Data, path: String) throws(CoreDataStoreError) -> XMLTree {
        // Xcode writes model files as UTF-8. Bytes that are not would reach FoundationXML, which
        // force-unwraps their decoding in element and attribute names and kills the process (found by
        // scripts/fuzz modelxml): refuse them first, and NUL too, which no XML holds.
        guard let text = String(validatingUTF8Bytes: data) else {
            throw .invalidModelFile(path: path, reason: "the file is not UTF-8 text")
        }
        // FoundationXML passes a processing instruction without data (`<?x?>`) to strlen as NULL and
        // crashes (found by scripts/fuzz modelxml). Model files hold none beyond the XML declaration.
        if Self.hasProcessingInstruction(text) {
            throw .invalidModelFile(path: path, reason: "it holds a processing instruction (<?…?>) other than the XML declaration")
        }
        let parser = XMLParser(data: data)
        // A model file never needs external entities or DTDs; refusing them keeps reads local and bounded.
        parser.shouldResolveExternalEntities = false
        let builder = Builder()
        parser.delegate = builder
        let parsed = parser.parse()
        if let limit = builder.exceeded {
            throw .invalidModelFile(path: path, reason: "the XML \(limit) (at line \(parser.lineNumber))")
        }
        guard parsed, let root = builder.root else {
            let reason = parser.parserError.map { "invalid XML at line \(parser.lineNumber): \($0.localizedDescription)" }
                ?? "invalid XML"
            throw .invalidModelFile(path: path, reason: reason)
        }
        return root
    }

    /// Whether `text` has a `<?` other than a leading `<?xml …?>` declaration.
    static func hasProcessingInstruction(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.hasPrefix("\u{FEFF}") { rest = rest.dropFirst() }
        if rest.hasPrefix("<?xml "), let end = rest.range(of: "?>") { rest = rest[end.upperBound...] }
        return rest.contains("<?")
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [XMLTree] = []
        var root: XMLTree?
        var elements = 0
        /// Which limit the file exceeded, if any.
        var exceeded: String?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            elements += 1
            if stack.count >= XMLTree.maximumDepth {
                exceeded = "nests elements more than \(XMLTree.maximumDepth) deep"
            } else if elements > XMLTree.maximumElements {
                exceeded = "has more than \(XMLTree.maximumElements) elements"
            }
            guard exceeded == nil else { return parser.abortParsing() }
            stack.append(XMLTree(name: elementName, attributes: attributeDict, children: []))
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            guard exceeded == nil, let node = stack.popLast() else { return }
            if stack.isEmpty { root = node } else { stack[stack.count - 1].children.append(node) }
        }
    }
}

extension String {
    /// The text of `data` when it is valid UTF-8 without NUL characters, else nil.
    init?(validatingUTF8Bytes data: Data) {
        guard !data.contains(0), let text = String(bytes: data, encoding: .utf8) else { return nil }
        self = text
    }
}
