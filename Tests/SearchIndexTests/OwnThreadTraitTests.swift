import Foundation
import SearchIndex
import Testing
import TestScratch

/// The trait the waiting suites rely on: if it ran their tests on the cooperative pool again, nothing else
/// would fail until a slow CI machine starved the async tests.
@Suite("Tests on threads of their own", .ownThread)
struct OwnThreadTraitTests {
    @Test("a synchronous test runs on its own thread, not on the cooperative pool")
    func synchronous() {
        #expect(ThreadExecutor.currentName == "test synchronous()")
    }

    @Test("an async test stays on its thread across suspensions")
    func asynchronous() async throws {
        #expect(ThreadExecutor.currentName == "test asynchronous()")
        try await Task.sleep(nanoseconds: 1_000_000)
        #expect(ThreadExecutor.currentName == "test asynchronous()")
    }

    @Test("a test marked again inside a marked suite keeps its one slot and thread", .ownThread)
    func markedTwice() {
        #expect(ThreadExecutor.currentName == "test markedTwice()")
    }

    @Test("each case of a parameterized test gets a thread", arguments: [1, 2])
    func parameterized(_ value: Int) {
        #expect(ThreadExecutor.currentName == "test parameterized(_:)")
    }
}
