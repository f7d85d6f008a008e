import CoreDataStore
import Foundation
import SearchIndex

/// A configuration checked against a model: for every indexed concrete entity, parsed expressions whose
/// key paths all exist. Built once at start-up; invalid input fails here, with positions.
public struct ResolvedConfiguration: Sendable {
    /// The parsed fields of one entity's items.
    public struct EntityPlan: Sendable, Hashable {
        /// The entity the plan is for.
        public var entity: String
        public var displayName: Expression
        public var title: Expression?
        public var text: [Expression]
        public var keywords: [Expression]
        public var latitude: Expression?
        public var longitude: Expression?
        public var date: Expression?
        public var rank: Expression?
        /// Filter attributes, sorted by name.
        public var attributes: [FilterAttribute] = []

        /// One filter attribute: its name in filter predicates and the expression giving its values.
        public struct FilterAttribute: Sendable, Hashable {
            public var name: String
            public var expression: Expression
        }
        /// The coordinates that mean "no location": the latitude and longitude attributes' default values,
        /// when both are plain attributes with numeric defaults (Photos: −180, −180; Frollo: 0, 0).
        public var unsetPlace: Coordinates?

        /// A latitude and longitude pair.
        public struct Coordinates: Sendable, Hashable {
            public var latitude: Double
            public var longitude: Double
        }

        var all: [Expression] { [displayName] + [title, latitude, longitude, date, rank].compactMap { $0 } + text + keywords + attributes.map(\.expression) }
    }

    /// Plans of the indexed concrete entities.
    public let plans: [String: EntityPlan]
    /// The effective configuration (defaults filled in), as a command line would print it.
    public let effective: IndexConfiguration
    /// The configuration as given (empty for zero configuration): what an index keeps, since it resolves
    /// again against a migrated model where the effective one, naming every entity, may not.
    public let given: IndexConfiguration
    /// Saved searches by name: the configuration's and the model's runnable fetch-request templates.
    public let searches: [String: SavedSearch]
    /// What an index keeps: the configuration as given, with the saved searches.
    public var stored: IndexConfiguration { IndexConfiguration(entities: given.entities, searches: searches) }
    /// Changes exactly when what items contain would change: a rebuild trigger.
    public let digest: String
    let model: ManagedObjectModel
    /// Key paths per entity, computed once: the item builder asks for them for every object.
    private let keyPathsByEntity: [String: [[String]]]

    /// Why a configuration does not fit the model.
    public struct ResolutionError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Resolves a configuration (nil: zero configuration) against a model; expressions may call the
    /// `FUNCTION` selectors `functions` registers, and no others.
    public init(_ configuration: IndexConfiguration?, model: ManagedObjectModel, functions: FunctionRegistry = .standard) throws(ResolutionError) {
        self.model = model
        let configuration = configuration ?? IndexConfiguration()
        given = configuration
        for name in configuration.entities.keys where model.entity(named: name) == nil {
            throw ResolutionError(description: "the configuration names an entity '\(name)' that the model does not have; entities: "
                + model.entities.map(\.name).joined(separator: ", "))
        }
        var plans: [String: EntityPlan] = [:]
        var effective: [String: IndexConfiguration.Entry] = [:]
        for entity in model.entities {
            // An entry applies to the entity and its sub-entities; the nearest one wins, field by field.
            let chain = (model.ancestors(of: entity.name).reversed() + [entity.name]).compactMap { configuration.entities[$0] }
            if entity.isAbstract || chain.last == .excluded {
                effective[entity.name] = .excluded
                continue
            }
            var fields = Self.defaults(for: entity.name, model: model)
            for case .fields(let override) in chain { fields = fields.overridden(by: override) }
            effective[entity.name] = .fields(fields)
            plans[entity.name] = try Self.plan(fields, entity: entity.name, model: model, functions: functions)
        }
        self.plans = plans
        // Saved searches: the configuration's, and each fetch-request template of the model whose key
        // paths are all item attributes (re-derived from the model every time, never taken from a stored copy).
        var searches = configuration.searches.filter { $0.value.origin == .configuration }
        for template in model.fetchRequestTemplates where searches[template.name] == nil {
            if let search = Self.savedSearch(for: template, plans: plans) { searches[template.name] = search }
        }
        self.searches = searches
        self.effective = IndexConfiguration(entities: effective, searches: searches)
        var canonical = ""
        for (name, plan) in plans.sorted(by: { $0.key < $1.key }) {
            canonical += "\(name): \(plan.all.map(\.description).joined(separator: " | "))"
                + (plan.attributes.isEmpty ? "" : " attributes " + plan.attributes.map(\.name).joined(separator: ","))
                + "\n"
        }
        digest = FNV1a.hex(canonical)
        keyPathsByEntity = plans.mapValues { plan in Self.keyPaths(of: plan, plans: plans, model: model) }
    }

    /// Every key path of the entity's expressions, plus — for paths ending on a relationship — the
    /// destination's display-name paths behind it.
    func keyPaths(of entity: String) -> [[String]] {
        keyPathsByEntity[entity] ?? []
    }

    private static func keyPaths(of plan: EntityPlan, plans: [String: EntityPlan], model: ManagedObjectModel) -> [[String]] {
        var paths: [[String]] = []
        for path in plan.all.flatMap(\.keyPaths) {
            paths.append(path)
            // A related object shows its own entity's display name: the destination's, or a sub-entity's.
            if let destination = destinationEntity(of: path, from: plan.entity, model: model) {
                for (_, target) in plans.filter({ model.isKind($0.key, of: destination) }).sorted(by: { $0.key < $1.key }) {
                    for suffix in target.displayName.keyPaths where suffix.count > 0 && !paths.contains(path + suffix) { paths.append(path + suffix) }
                }
            }
        }
        return paths
    }

    /// The entity a key path ends on when its last step is a relationship.
    private static func destinationEntity(of path: [String], from entity: String, model: ManagedObjectModel) -> String? {
        var current = entity
        for name in path {
            guard let relationship = model.relationship(name, of: current) else { return nil }
            current = relationship.destinationEntityName
        }
        return current
    }

    private static func plan(_ fields: IndexConfiguration.EntityFields, entity: String, model: ManagedObjectModel,
                             functions: FunctionRegistry) throws(ResolutionError) -> EntityPlan {
        func parse(_ text: String?) throws(ResolutionError) -> Expression? {
            guard let text else { return nil }
            let expression: Expression
            do {
                expression = try ExpressionParser.parse(text, functions: functions)
            } catch {
                throw ResolutionError(description: "\(entity): \(error)")
            }
            for path in expression.keyPaths { try check(path, in: text, entity: entity, model: model) }
            return expression
        }
        var text: [Expression] = [], keywords: [Expression] = []
        for item in fields.text ?? [] { if let expression = try parse(item) { text.append(expression) } }
        for item in fields.keywords ?? [] { if let expression = try parse(item) { keywords.append(expression) } }
        let latitude = try parse(fields.latitude), longitude = try parse(fields.longitude)
        let date = try parse(fields.date), rank = try parse(fields.rank)
        // A latitude that is a String would silently lose every place: refuse what cannot be a number.
        for (field, expression, text) in [("latitude", latitude, fields.latitude), ("longitude", longitude, fields.longitude), ("rank", rank, fields.rank)] {
            try requireKind(expression, text: text, field: field, entity: entity, model: model, accepts: numericTypes, kind: "a number")
        }
        try requireKind(date, text: fields.date, field: "date", entity: entity, model: model, accepts: [.date], kind: "a date")
        var plan = EntityPlan(
            entity: entity, displayName: try parse(fields.displayName) ?? .string(entity), title: try parse(fields.title), text: text, keywords: keywords,
            latitude: latitude, longitude: longitude, date: date, rank: rank)
        for (name, text) in (fields.attributes ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let expression = try parse(text) { plan.attributes.append(EntityPlan.FilterAttribute(name: name, expression: expression)) }
        }
        // Apple's models give non-optional coordinates a default that means "unset" (Photos −180, Frollo 0).
        if case .keyPath(let latitudePath)? = latitude, case .keyPath(let longitudePath)? = longitude, latitudePath.count == 1, longitudePath.count == 1,
           let latitudeDefault = model.attribute(latitudePath[0], of: entity)?.defaultValue.flatMap(Double.init),
           let longitudeDefault = model.attribute(longitudePath[0], of: entity)?.defaultValue.flatMap(Double.init) {
            plan.unsetPlace = EntityPlan.Coordinates(latitude: latitudeDefault, longitude: longitudeDefault)
        }
        return plan
    }

    /// Attribute types a number can come from (a Boolean ranks as 0 or 1; a date as seconds since 2001).
    static let numericTypes: Set<AttributeType> = [.integer16, .integer32, .integer64, .decimal, .double, .float, .boolean, .date]

    /// Refuses a field whose expression is a key path ending on an attribute of the wrong type, or a string literal.
    private static func requireKind(
        _ expression: Expression?, text: String?, field: String, entity: String, model: ManagedObjectModel,
        accepts types: Set<AttributeType>, kind: String
    ) throws(ResolutionError) {
        switch expression {
        case .string?:
            throw ResolutionError(description: "\(entity): \(field) '\(text ?? "")' is a string, not \(kind)")
        case .keyPath(let path)?:
            guard let destination = destinationEntity(of: Array(path.dropLast()), from: entity, model: model), let last = path.last,
                  let attribute = model.attribute(last, of: destination) else { return }
            guard types.contains(attribute.type) else {
                var position = 1
                if let text, let range = text.range(of: last, options: .backwards) { position = text.distance(from: text.startIndex, to: range.lowerBound) + 1 }
                throw ResolutionError(description: "\(entity): invalid expression '\(text ?? "")' at character \(position): \(destination).\(last) is \(attribute.type.modelFileName), not \(kind)")
            }
        default:
            return
        }
    }

    private static func check(_ path: [String], in text: String, entity: String, model: ManagedObjectModel) throws(ResolutionError) {
        var current = entity
        for (index, name) in path.enumerated() {
            let position = (text.range(of: path[..<(index + 1)].joined(separator: "."))?.upperBound).map {
                text.distance(from: text.startIndex, to: $0) - name.count + 1
            } ?? 1
            if let relationship = model.relationship(name, of: current) {
                current = relationship.destinationEntityName
                continue
            }
            if model.attribute(name, of: current) != nil, index == path.count - 1 { return }
            let reason = model.attribute(name, of: current) != nil
                ? "'\(name)' is an attribute of \(current); only relationships can be followed with '.'"
                : "\(current) has no property '\(name)'"
            throw ResolutionError(description: "\(entity): invalid expression '\(text)' at character \(position): \(reason)")
        }
    }

    /// Zero configuration, per DESIGN §4.
    static func defaults(for entity: String, model: ManagedObjectModel) -> IndexConfiguration.EntityFields {
        let attributes = model.allAttributes(of: entity).filter(\.isStored)
        let strings = attributes.filter { $0.type == .string }
        let display = ["name", "title", "displayName", "label", "subject"].lazy.compactMap { name in strings.first { $0.name == name } }.first
            ?? strings.first
            ?? attributes.first { [.integer16, .integer32, .integer64, .double, .float, .date].contains($0.type) }
        var text: [String]
        if model.marksSpotlightProperties {
            text = attributes.filter(\.isIndexedBySpotlight).map(\.name)
                + model.allRelationships(of: entity).filter(\.isIndexedBySpotlight).map(\.name)
        } else {
            text = strings.map(\.name)
        }
        text.removeAll { $0 == display?.name }
        let numeric = attributes.filter { $0.type == .double || $0.type == .float }
        var latitude = ["latitude", "lat"].lazy.compactMap { name in numeric.first { $0.name == name } }.first
        var longitude = ["longitude", "lon", "lng"].lazy.compactMap { name in numeric.first { $0.name == name } }.first
        if latitude == nil || longitude == nil {
            // A prefixed pair, as Photos' Moment has: approximateLatitude and approximateLongitude.
            for candidate in numeric where candidate.name.lowercased().hasSuffix("latitude") {
                let prefix = candidate.name.dropLast("latitude".count)
                if let partner = numeric.first(where: { $0.name.lowercased() == (prefix + "longitude").lowercased() }) {
                    latitude = candidate
                    longitude = partner
                    break
                }
            }
        }
        let date = ["updatedAt", "modifiedAt", "updated", "modified", "date", "timestamp", "createdAt"].lazy
            .compactMap { name in attributes.first { $0.name == name && $0.type == .date } }.first
        return IndexConfiguration.EntityFields(
            displayName: display?.name ?? "'\(entity)'", title: nil, text: text, keywords: nil,
            latitude: latitude.flatMap { _ in longitude != nil ? latitude?.name : nil },
            longitude: longitude.flatMap { _ in latitude != nil ? longitude?.name : nil }, date: date?.name, rank: nil)
    }
}

extension ResolvedConfiguration {
    /// A fetch-request template as a saved search, when the index can run it: its entity is indexed and
    /// every key path of its predicate is an item attribute (by name, or by an expression that is that key
    /// path), renamed to that attribute. A template without a predicate lists every item of its entity.
    static func savedSearch(for template: FetchRequestTemplate, plans: [String: EntityPlan]) -> SavedSearch? {
        guard let plan = plans[template.entityName] else { return nil }
        var names: [String: String] = [:]
        for attribute in plan.attributes {
            names[attribute.name] = attribute.name
            names[attribute.expression.description] = names[attribute.expression.description] ?? attribute.name
        }
        let predicate = template.predicate ?? "TRUEPREDICATE"
        do throws(SearchIndexError) {
            let variables = try PredicateParser.variables(in: predicate)
            let parsed = try PredicateParser.parse(predicate, variables: Dictionary(uniqueKeysWithValues: variables.map { ($0, "1") }))
            guard parsed.attributes.allSatisfy({ names[$0] != nil }) else { return nil }
            return try SavedSearch(name: template.name, filter: try PredicateParser.renamingAttributes(in: predicate, names),
                                   entities: [template.entityName], origin: .model)
        } catch {
            return nil
        }
    }
}

