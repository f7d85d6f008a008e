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
    /// Code that reshapes or skips items, by indexed entity: its own producer, else its nearest ancestor's
    /// (resolved once, not per object).
    let producers: [String: any ItemProducer]
    /// What the producers add to the configuration's digest: a new producer version rebuilds like a new
    /// configuration.
    let producerDigest: String

    init(configuration: ResolvedConfiguration, functions: FunctionRegistry, producers: [String: any ItemProducer] = [:]) {
        self.configuration = configuration
        self.functions = functions
        let model = configuration.model
        self.producers = configuration.plans.keys.reduce(into: [:]) { resolved, entity in
            resolved[entity] = ([entity] + model.ancestors(of: entity)).lazy.compactMap { producers[$0] }.first
        }
        producerDigest = producers.keys.sorted().map { "\($0)=\(producers[$0]?.version ?? "")" }.joined(separator: ",")
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
        /// The configuration's item for `object`, passed through its entity's producer, if any; either way
        /// it holds only what any item may hold (``sanitize(_:plan:omitted:)``).
        func item(for object: ManagedObjectSnapshot, plan: ResolvedConfiguration.EntityPlan) -> IndexedItem? {
            let proposed = configuredItem(for: object, plan: plan)
            var item = proposed
            if let producer = producers[object.entityName] {
                guard let produced = producer.item(for: object, proposed: proposed) else { return nil }
                // The item stays the object's.
                item = produced
                item.uri = proposed.uri
                item.entity = proposed.entity
            }
            Self.sanitize(&item, plan: plan, omitted: &omitted)
            return item
        }

        func configuredItem(for object: ManagedObjectSnapshot, plan: ResolvedConfiguration.EntityPlan) -> IndexedItem {
            // An item carries at most the first thousand values of each expression: a relationship's
            // thousand-and-first tag or name adds bytes to every item, not findability.
            func texts(_ expression: Expression?) -> [String] {
                expression.map { Array(evaluator.evaluate($0, on: object).texts.prefix(Self.maximumValues)) } ?? []
            }
            return IndexedItem(
                uri: object.objectID.uriRepresentation, entity: object.entityName,
                displayName: texts(plan.displayName).joined(separator: " "), title: texts(plan.title).joined(separator: " "),
                text: plan.text.flatMap { texts($0) }, keywords: plan.keywords.flatMap { texts($0) },
                latitude: plan.latitude.flatMap { evaluator.evaluate($0, on: object).number },
                longitude: plan.longitude.flatMap { evaluator.evaluate($0, on: object).number },
                date: plan.date.flatMap { evaluator.evaluate($0, on: object).date },
                rank: plan.rank.flatMap { evaluator.evaluate($0, on: object).number } ?? 0,
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

    /// Makes `item` hold only what any item may hold, whether the configuration or an ``ItemProducer`` built
    /// it, counting in `omitted` the values left out: non-finite numbers and dates, a place that is not one
    /// (non-finite, out of range, or half of one; the model's "unset" default, as Photos' −180 or Frollo's 0,
    /// is no place and not counted) and filter values that are not finite. Text and keywords keep at most a
    /// thousand values per expression of the plan.
    static func sanitize(_ item: inout IndexedItem, plan: ResolvedConfiguration.EntityPlan, omitted: inout Int) {
        if !item.rank.isFinite {
            omitted += 1
            item.rank = 0
        }
        // A place is counted once when it is not one: for its non-finite halves, or else for being out of range
        // or half of one.
        var placeCounted = false
        for coordinate in [\IndexedItem.latitude, \IndexedItem.longitude] where item[keyPath: coordinate]?.isFinite == false {
            omitted += 1
            placeCounted = true
            item[keyPath: coordinate] = nil
        }
        if let latitude = item.latitude, let longitude = item.longitude, plan.unsetPlace == .init(latitude: latitude, longitude: longitude) {
            item.latitude = nil
            item.longitude = nil
        } else if !item.hasLocation && (item.latitude != nil || item.longitude != nil) {
            if !placeCounted { omitted += 1 }
            item.latitude = nil
            item.longitude = nil
        }
        if let date = item.date, !date.timeIntervalSinceReferenceDate.isFinite {
            omitted += 1
            item.date = nil
        }
        // Checked before anything is copied: the export's hot path, where items are almost always fine.
        let (textLimit, keywordLimit) = (maximumValues * max(1, plan.text.count), maximumValues * max(1, plan.keywords.count))
        if item.text.count > textLimit { item.text.removeLast(item.text.count - textLimit) }
        if item.keywords.count > keywordLimit { item.keywords.removeLast(item.keywords.count - keywordLimit) }
        for (name, values) in item.attributes where !values.allSatisfy(\.isFinite) {
            let finite = values.filter(\.isFinite)
            omitted += values.count - finite.count
            item.attributes[name] = finite.isEmpty ? nil : finite
        }
    }

    /// The item's filter attributes: every scalar of each expression, typed as it evaluated (a Boolean is
    /// 1 or 0); ``sanitize(_:plan:omitted:)`` leaves out the non-finite ones, as everywhere else.
    static func filterValues(_ plan: ResolvedConfiguration.EntityPlan, object: ManagedObjectSnapshot, evaluator: ExpressionEvaluator) -> [String: [FilterValue]] {
        var attributes: [String: [FilterValue]] = [:]
        for attribute in plan.attributes {
            let values: [FilterValue] = evaluator.evaluate(attribute.expression, on: object).flattened.prefix(maximumValues).compactMap { value in
                switch value {
                case .string(let text): .string(text)
                case .number(let number): .number(number)
                case .date(let date): .date(date)
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
