import Dispatch
import Foundation

/// Set when SIGINT or SIGTERM arrives; `index --follow` checks it between batches and exits 0.
final class StopRequest: @unchecked Sendable {
    // Safe: `requested` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var requested = false
    private var sources: [DispatchSourceSignal] = []

    var isRequested: Bool { lock.withLock { requested } }

    static func onTerminationSignals() -> StopRequest {
        let request = StopRequest()
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN) // handled by the dispatch source instead of killing the process
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { request.lock.withLock { request.requested = true } }
            source.resume()
            request.sources.append(source)
        }
        return request
    }
}
