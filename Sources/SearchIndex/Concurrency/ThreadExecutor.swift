import Foundation
import Synchronization

/// A task executor with one thread of its own, for the stages of indexing that block on SQLite and files,
/// and for the tasks a blocking call into an async library runs (they must not need the cooperative pool,
/// whose threads the blocked callers may hold).
///
/// A stage runs as a task that prefers this executor (`withTaskExecutorPreference`, or
/// `addTask(executorPreference:)` in a task group): its synchronous SQLite calls and its waits on the page
/// hand-off then block this thread, never a thread of Swift's cooperative pool, while its structure
/// (children awaited, cancellation propagated, errors thrown to the parent) is a task's.
package final class ThreadExecutor: TaskExecutor {
    /// Jobs in the order they were enqueued; nil asks the thread to end.
    private let jobs = Mutex<[UnownedJob?]>([])
    /// Counts the entries of `jobs`: the thread sleeps on it.
    private let available = DispatchSemaphore(value: 0)

    private init(name: String) {
        // The thread keeps its executor until it ends: a job may still run on it after the task that
        // created the executor let go of it. `withExecutor` and `detachedTask` always end the thread, so
        // nothing leaks.
        let thread = Thread { [self] in
            Thread.current.threadDictionary[Self.nameKey] = name
            while true {
                available.wait()
                guard let job = jobs.withLock({ $0.removeFirst() }) else { return }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        thread.name = name
        thread.start()
    }

    private static let nameKey = "searchlight.ThreadExecutor.name"

    /// The name of the executor whose thread calls this, nil on any other thread (Linux's thread names are
    /// not Foundation's: this is how a test tells which stage's thread it is on).
    package static var currentName: String? { Thread.current.threadDictionary[nameKey] as? String }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    /// An executor whose thread lives as long as the process: for short jobs of many tasks that each
    /// await something else most of the time (calls into an event-loop library).
    package static func lasting(named name: String) -> ThreadExecutor { ThreadExecutor(name: name) }

    /// Lets the thread end after the jobs enqueued so far.
    private func end() {
        jobs.withLock { $0.append(nil) }
        available.signal()
    }

    /// Starts `operation` as a detached task on a new executor, whose thread ends once the task is done.
    ///
    /// The task begins on its executor's thread: unlike a detached task that then moves there, it needs no
    /// free thread of the cooperative pool to start (one blocked by a synchronous wait would hold it back).
    package static func detachedTask<T: Sendable>(named name: String, _ operation: @escaping @Sendable () async -> T) -> Task<T, Never> {
        let executor = ThreadExecutor(name: name)
        return Task.detached(executorPreference: executor) {
            defer { executor.end() }
            return await operation()
        }
    }

    /// Runs `body` with a new executor and its thread, which ends once `body` has returned and the
    /// thread has run what was enqueued before.
    ///
    /// Whatever `body` starts on the executor must be done when it returns (awaited, as a task group's
    /// children are): the executor takes no work after it.
    package static func withExecutor<T, Failure: Error>(named name: String, _ body: (ThreadExecutor) async throws(Failure) -> T) async throws(Failure) -> T {
        let executor = ThreadExecutor(name: name)
        // Not a blocking join: the caller may still be on the executor's thread, which ends after it moves on.
        defer { executor.end() }
        return try await body(executor)
    }
}
