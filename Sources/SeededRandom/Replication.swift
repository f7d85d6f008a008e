/// Larger data sets from a real one: copies of every element, each moved a little, reproducibly.
public enum Replication {
    /// `elements` followed by `copies` jittered copies of them. Each copy's coordinate moves by up to
    /// ±`jitter` degrees (clamped to valid latitudes and longitudes), drawn from a generator seeded with
    /// `seed`, so the same call always builds the same data.
    public static func jittered<Element>(
        _ elements: [Element], copies: Int, jitter: Double = 0.05, seed: UInt64,
        latitude: WritableKeyPath<Element, Double>, longitude: WritableKeyPath<Element, Double>
    ) -> [Element] {
        var generator = SeededGenerator(state: seed)
        var result = elements
        result.reserveCapacity(elements.count * (1 + max(0, copies)))
        for _ in 0..<max(0, copies) {
            for element in elements {
                var copy = element
                copy[keyPath: latitude] = min(90, max(-90, element[keyPath: latitude] + Double.random(in: -jitter...jitter, using: &generator)))
                copy[keyPath: longitude] = min(180, max(-180, element[keyPath: longitude] + Double.random(in: -jitter...jitter, using: &generator)))
                result.append(copy)
            }
        }
        return result
    }
}
