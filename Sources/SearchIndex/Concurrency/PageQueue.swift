import Foundation

/// A bounded, ordered hand-off of pages between a producing stage and the committing one.
///
/// Both ends block: the producer hands pages over inside one store read, the committer takes them inside
/// one index transaction, and neither can suspend there. Each stage runs on a ``ThreadExecutor`` of its own,
/// so the waits block the stage's thread, never Swift's cooperative pool. (An export's end hands the lists
/// a reader made to the writer through one too.)
package final class PageQueue<Page: Sendable>: @unchecked Sendable {
    // Safe: every field is read and written only while holding `condition`'s lock.
    private let condition = NSCondition()
    private var pages: [Page] = []
    private var finished = false
    private var cancelled = false
    private var failure: (any Error)?
    private let capacity: Int

    package init(capacity: Int) { self.capacity = capacity }

    /// Adds a page, waiting while the queue is full; false when the consumer gave up.
    package func put(_ page: Page) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while pages.count >= capacity && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        pages.append(page)
        condition.broadcast()
        return true
    }

    /// Marks the end of the pages (with the producer's error, if it failed).
    package func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next page in order, nil at the end; rethrows the producer's error.
    package func next() throws -> Page? {
        condition.lock()
        defer { condition.unlock() }
        while pages.isEmpty && !finished { condition.wait() }
        if !pages.isEmpty {
            let page = pages.removeFirst()
            condition.broadcast()
            return page
        }
        if let failure { throw failure }
        return nil
    }

    /// The next page if one is waiting, else nil at once (also at the end); rethrows the producer's error.
    package func nextIfWaiting() throws -> Page? {
        condition.lock()
        defer { condition.unlock() }
        if !pages.isEmpty {
            let page = pages.removeFirst()
            condition.broadcast()
            return page
        }
        if finished, let failure { throw failure }
        return nil
    }

    /// The next page, or nil at the end and when the producer failed, its error then kept in `failure`:
    /// a consumer inside the index's transaction commits the pages before it, then throws it as itself.
    package func next(failure: inout (any Error)?) -> Page? {
        do { return try next() } catch {
            failure = error
            return nil
        }
    }

    /// Stops the producer (the consumer failed or finished).
    package func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
