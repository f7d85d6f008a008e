import CoreDataStore
import Foundation
import SearchIndex

/// Turns objects into index items: evaluates each entity's expressions over an object graph filled
/// level by level with bulk fetches (one query per table per relationship hop per batch).
struct ItemBuilder: Sendable {
    /// The most values one expression contributes to an item's text.
    static let maximumValues = 1_000

    let configuration: ResolvedConfiguration
    let functions: FunctionRegistry
    /// Code that reshapes or skips items, by entity (subentities inherit it).
    let producers: [String: any ItemProducer]

    init(configuration: ResolvedConfiguration, functions: FunctionRegistry, producers: [String: any ItemProducer] = [:]) {
        self.configuration = configuration
        self.functions = functions
        self.producers = producers
    }

    /// The producer for an entity: its own, else its nearest ancestor's.
    func producer(for entity: String) -> (any ItemProducer)? {
        var current: String? = entity
        while let name = current {
            if let producer = producers[name] { return producer }
            current = configuration.model.entity(named: name)?.superentityName
        }
        return nil
    }

    /// What the producers add to the configuration's digest: a new producer version rebuilds like a new
    /// configuration.
    var producerDigest: String {
        producers.keys.sorted().map { "\($0)=\(producers[$0]?.version ?? "")" }.joined(separator: ",")
    }

    /// The to-many relationships a base object of this entity must come with.
    func selection(for entity: String) -> RelationshipSelection {
        .toOneAnd(Set(configuration.keyPaths(of: entity).compactMap { path in
            path.first.flatMap { configuration.model.relationship($0, of: entity)?.isToMany == true ? $0 : nil }
        }))
    }

    /// The selection for a page that may hold several entities of one hierarchy.
    func selection(forHierarchy root: String) -> RelationshipSelection {
        var names: Set<String> = []
        for entity in configuration.model.hierarchy(from: root) {
            if case .toOneAnd(let more) = selection(for: entity) { names.formUnion(more) }
        }
        return .toOneAnd(names)
    }

    /// Items built from a batch of objects, and how many values were left out of them because they were not
    /// finite numbers (NaN, ±∞) or not coordinates (a latitude of −180): one bad value never stops an export.
    struct Built: Sendable {
        var items: [IndexedItem]
        var omittedValues: Int
        /// URIs of indexed objects an ``ItemProducer`` left out: items they had must go.
        var skipped: [String] = []
    }

    func items(for objects: [ManagedObjectSnapshot], in snapshot: StoreSnapshot, now: Date = Date()) throws(CoreDataStoreError) -> Built {
        let indexed = objects.filter { configuration.plans[$0.entityName] != nil }
        var graph = Dictionary(objects.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
        var frontier: [(ManagedObjectSnapshot, [[String]])] = indexed.map { ($0, configuration.keyPaths(of: $0.entityName)) }
        while !frontier.isEmpty {
            var wanted: [ManagedObjectID: Set<[String]>] = [:]
            for (object, paths) in frontier {
                for path in paths {
                    guard let first = path.first else { continue }
                    let destinations = object.toOne[first].map { [$0] } ?? object.toMany[first] ?? []
                    for destination in destinations { wanted[destination, default: []].insert(Array(path.dropFirst())) }
                }
            }
            let missing = wanted.keys.filter { graph[$0] == nil }
            if !missing.isEmpty {
                var toMany: Set<String> = []
                for id in missing {
                    for path in wanted[id] ?? [] {
                        if let first = path.first, configuration.model.relationship(first, of: id.entityName)?.isToMany == true { toMany.insert(first) }
                    }
                }
                for (id, object) in try snapshot.objects(missing, relationships: .toOneAnd(toMany)) { graph[id] = object }
            }
            frontier = wanted.compactMap { id, paths in
                let rest = paths.filter { !$0.isEmpty }
                return rest.isEmpty ? nil : graph[id].map { ($0, Array(rest)) }
            }
        }
        let evaluator = ExpressionEvaluator(graph: graph, functions: functions, displayName: { related in
            guard let plan = configuration.plans[related.entityName] else { return nil }
            return ExpressionEvaluator(graph: graph, functions: functions, displayName: { _ in nil }, now: now)
                .evaluate(plan.displayName, on: related).texts.joined(separator: " ")
        }, now: now)
        var omitted = 0
        /// A finite number, or nil (counted) for NaN and infinities.
        func finite(_ number: Double?) -> Double? {
            guard let number else { return nil }
            guard number.isFinite else { omitted += 1; return nil }
            return number
        }
        /// The configuration's item for `object`, passed through its entity's producer, if any.
        func item(for object: ManagedObjectSnapshot, plan: ResolvedConfiguration.EntityPlan) -> IndexedItem? {
            let proposed = configuredItem(for: object, plan: plan)
            guard let producer = producer(for: object.entityName) else { return proposed }
            guard var produced = producer.item(for: object, proposed: proposed) else { return nil }
            // The item stays the object's, and holds only what any item may hold.
            produced.uri = proposed.uri
            produced.entity = proposed.entity
            produced.rank = finite(produced.rank) ?? 0
            let inRange = produced.latitude.map { (-90...90).contains($0) } == true && produced.longitude.map { (-180...180).contains($0) } == true
            if !inRange && (produced.latitude != nil || produced.longitude != nil) {
                omitted += 1
                produced.latitude = nil
                produced.longitude = nil
            }
            if let date = produced.date, !date.timeIntervalSinceReferenceDate.isFinite {
                omitted += 1
                produced.date = nil
            }
            return produced
        }

        func configuredItem(for object: ManagedObjectSnapshot, plan: ResolvedConfiguration.EntityPlan) -> IndexedItem {
            // An item carries at most the first thousand values of each expression: a relationship's
            // thousand-and-first tag or name adds bytes to every item, not findability.
            func texts(_ expression: Expression?) -> [String] {
                expression.map { Array(evaluator.evaluate($0, on: object).texts.prefix(Self.maximumValues)) } ?? []
            }
            var latitude = finite(plan.latitude.flatMap { evaluator.evaluate($0, on: object).number })
            var longitude = finite(plan.longitude.flatMap { evaluator.evaluate($0, on: object).number })
            // A place needs both halves in range and not the model's "unset" defaults (Photos −180, Frollo 0).
            if let lat = latitude, let lon = longitude,
               !((-90...90).contains(lat) && (-180...180).contains(lon)) || plan.unsetPlace == .init(latitude: lat, longitude: lon) {
                latitude = nil
                longitude = nil
            }
            let date = plan.date.flatMap { evaluator.evaluate($0, on: object).date }
            let seconds = finite(date?.timeIntervalSinceReferenceDate)
            return IndexedItem(
                uri: object.objectID.uriRepresentation, entity: object.entityName,
                displayName: texts(plan.displayName).joined(separator: " "), title: texts(plan.title).joined(separator: " "),
                text: plan.text.flatMap { texts($0) }, keywords: plan.keywords.flatMap { texts($0) },
                latitude: latitude, longitude: longitude, date: seconds.map(Date.init(timeIntervalSinceReferenceDate:)),
                rank: finite(plan.rank.flatMap { evaluator.evaluate($0, on: object).number }) ?? 0,
                attributes: Self.filterValues(plan, object: object, evaluator: evaluator))
        }

        var skipped: [String] = []
        let items = indexed.compactMap { object -> IndexedItem? in
            guard let plan = configuration.plans[object.entityName] else { return nil }
            guard let item = item(for: object, plan: plan) else {
                skipped.append(object.objectID.uriRepresentation)
                return nil
            }
            return item
        }
        return Built(items: items, omittedValues: omitted, skipped: skipped)
    }

    /// The item's filter attributes: every scalar of each expression, typed as it evaluated (a Boolean is
    /// 1 or 0); non-finite numbers are left out like everywhere else.
    static func filterValues(_ plan: ResolvedConfiguration.EntityPlan, object: ManagedObjectSnapshot, evaluator: ExpressionEvaluator) -> [String: [FilterValue]] {
        var attributes: [String: [FilterValue]] = [:]
        for attribute in plan.attributes {
            let values: [FilterValue] = evaluator.evaluate(attribute.expression, on: object).flattened.prefix(maximumValues).compactMap { value in
                switch value {
                case .string(let text): .string(text)
                case .number(let number): number.isFinite ? .number(number) : nil
                case .date(let date): date.timeIntervalSinceReferenceDate.isFinite ? .date(date) : nil
                case .null, .list: nil
                }
            }
            if !values.isEmpty { attributes[attribute.name] = values }
        }
        return attributes
    }

    /// Indexed objects of `indexed` reach an object of the entity it is keyed under through `inverses`,
    /// and show what `suffixes` (key paths from that object) lead to.
    struct Dependency: Sendable {
        var indexed: String
        var inverses: [String]
        /// The rest of each key path from the related object; empty when the path ends on it.
        var suffixes: Set<[String]>
    }

    /// For every entity a key path passes through, the inverse chains that lead back to the indexed
    /// entities showing it, with what they show of it: a change there re-indexes those objects.
    func dependencies() -> [String: [Dependency]] {
        let model = configuration.model
        var result: [String: [Dependency]] = [:]
        for entity in configuration.plans.keys.sorted() {
            for path in Set(configuration.keyPaths(of: entity)).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                var current = entity
                var inverses: [String] = []
                for (step, name) in path.enumerated() {
                    guard let relationship = model.relationship(name, of: current), let inverse = model.inverse(of: relationship) else { break }
                    inverses.insert(inverse.name, at: 0)
                    current = relationship.destinationEntityName
                    let suffix = Array(path[(step + 1)...])
                    if let existing = result[current, default: []].firstIndex(where: { $0.indexed == entity && $0.inverses == inverses }) {
                        result[current]?[existing].suffixes.insert(suffix)
                    } else {
                        result[current, default: []].append(Dependency(indexed: entity, inverses: inverses, suffixes: [suffix]))
                    }
                }
            }
        }
        return result
    }
}
