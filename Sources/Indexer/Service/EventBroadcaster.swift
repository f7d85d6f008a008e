import Synchronization

/// Hands every event to every current subscriber's stream, in the order they were sent.
final class EventBroadcaster: Sendable {
    private struct Subscribers {
        var next = 0
        var continuations: [Int: AsyncStream<IndexingEvent>.Continuation] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    /// A new stream of the events sent from now on; it ends when the broadcaster goes.
    func subscribe() -> AsyncStream<IndexingEvent> {
        // Unbounded: an update or a stop must never be dropped. A subscriber that stops reading should
        // drop its stream, which unsubscribes it.
        let (stream, continuation) = AsyncStream.makeStream(of: IndexingEvent.self)
        let id = subscribers.withLock { subscribers in
            defer { subscribers.next += 1 }
            subscribers.continuations[subscribers.next] = continuation
            return subscribers.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sends an event to every subscriber.
    func send(_ event: IndexingEvent) {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) { continuation.yield(event) }
    }

    deinit {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) { continuation.finish() }
    }
}
