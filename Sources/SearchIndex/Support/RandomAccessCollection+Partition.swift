extension RandomAccessCollection {
    /// The first index whose element is in the second part of a collection partitioned by `isInSecondPart`
    /// (false for every element before it, true from it on), by binary search; `endIndex` when none is.
    func partitionIndex(where isInSecondPart: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex, count = self.count
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if try isInSecondPart(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}

extension RandomAccessCollection where Element: Comparable {
    /// Whether a collection sorted in ascending order holds `element`, by binary search.
    func sortedContains(_ element: Element) -> Bool {
        let found = partitionIndex { $0 >= element }
        return found != endIndex && self[found] == element
    }
}
