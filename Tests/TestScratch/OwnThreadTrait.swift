import Foundation
import SearchIndex
import Synchronization
import Testing

/// Runs each test of a suite on a thread of its own instead of a thread of Swift's cooperative pool, with at
/// most one such test per core at once.
///
/// The pool has one thread per core: two on the CI machine. A test that waits on a child process, a
/// semaphore or a sleep holds its thread for as long as it waits, and two of them starved every async test
/// of the process for two and a half minutes (a follower's events went unrecorded, a 10 s bound failed). On
/// its own thread such a test blocks nothing else; the slots keep a suite of process-spawning tests from
/// starting all at once on two cores, which would stretch every timing the tests bound.
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test of the suite it is attached to.
    public var isRecursive: Bool { true }

    /// A scope around each test case's run only (not around the suite, nor around a whole parameterized
    /// test): a slot is held while a case runs.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThreadTrait? {
        testCase == nil ? nil : self
    }

    /// Waits for a slot without holding a thread, then runs the case in its task on a new thread.
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // Applied twice (a suite's and its test's own): the outer scope holds the slot and the thread.
        guard !Self.isInside else { return try await function() }
        await Self.slots.acquire()
        defer { Self.slots.release() }
        // The case stays in its task (task-locals, so issues are attributed to it), on the executor's thread;
        // a nonisolated body, synchronous or not, runs there.
        try await ThreadExecutor.withExecutor(named: "test \(test.name)") { executor in
            try await withTaskExecutorPreference(executor) { try await Self.$isInside.withValue(true) { try await function() } }
        }
    }

    /// Whether the current task runs inside this trait's scope: a second slot taken there could wait forever.
    @TaskLocal static var isInside = false

    /// One per core, at least two, as many as the pool's threads were: four on two cores let searches of the
    /// debug build pass their 10 s time limit in CI, beside the pool's own tests and the child processes.
    static let slots = Slots(count: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// A counting semaphore whose waiters suspend rather than block.
    final class Slots: Sendable {
        private struct State {
            var free: Int
            var waiting: [CheckedContinuation<Void, Never>] = []
        }

        private let state: Mutex<State>

        init(count: Int) { state = Mutex(State(free: count)) }

        func acquire() async {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard state.free > 0 else {
                        state.waiting.append(waiter)
                        return false
                    }
                    state.free -= 1
                    return true
                }
                if now { waiter.resume() }
            }
        }

        func release() {
            // A slot freed goes straight to the longest waiter.
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiting.isEmpty else {
                    state.free += 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test runs on a thread of its own, one per core at once (``OwnThreadTrait``): for tests that wait on
    /// processes, semaphores or sleeps, or that bound how long something takes.
    public static var ownThread: Self { OwnThreadTrait() }
}
