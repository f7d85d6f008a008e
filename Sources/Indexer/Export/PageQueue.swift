import Foundation
import Synchronization

/// A bounded, ordered hand-off of pages between the producer thread and the committing one.
final class PageQueue<Page: Sendable>: @unchecked Sendable {
    // Safe: every field is read and written only while holding `condition`'s lock.
    private let condition = NSCondition()
    private var pages: [Page] = []
    private var finished = false
    private var cancelled = false
    private var failure: (any Error)?
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Adds a page, waiting while the queue is full; false when the consumer gave up.
    func put(_ page: Page) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while pages.count >= capacity && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        pages.append(page)
        condition.broadcast()
        return true
    }

    /// Marks the end of the pages (with the producer's error, if it failed).
    func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next page in order, nil at the end; rethrows the producer's error.
    func next() throws -> Page? {
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

    /// The next page, or nil at the end and when the producer failed, its error then kept in `failure`:
    /// a consumer inside the index's transaction commits the pages before it, then throws it as itself.
    func next(failure: inout (any Error)?) -> Page? {
        do { return try next() } catch {
            failure = error
            return nil
        }
    }

    /// Stops the producer (the consumer failed or finished).
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}

/// A producer's thread, which the consumer joins: nothing the producer holds (a store read, a page being
/// built, the store itself) outlives the export or catch-up that started it.
final class ProducerThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let done = self.done
        // Foundation keeps a thread's block (and all it captured) until the thread object goes, which can be
        // after the join: the block holds the work only until it has run. A store released late by a thread
        // kept a private copy of it on disk past the command's exit.
        let work = Mutex<(@Sendable () -> Void)?>(body)
        let thread = Thread {
            work.withLock { $0.take() }?()
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits until the producer has returned and let go of what it held (at once if it has). Cancel its
    /// queue first.
    func join() {
        done.wait()
        done.signal()
    }
}
