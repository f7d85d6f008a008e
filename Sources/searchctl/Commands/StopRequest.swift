import Dispatch
import Foundation

/// Calls a handler when SIGINT or SIGTERM arrives, instead of ending the process: `index` stops between
/// batches and exits 0. Keep it alive as long as the signals should be handled.
final class StopRequest {
    private let sources: [any DispatchSourceSignal]

    private init(sources: [any DispatchSourceSignal]) { self.sources = sources }

    static func onTerminationSignals(_ handler: @escaping @Sendable () -> Void) -> StopRequest {
        let sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN) // handled by the dispatch source instead of killing the process
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
        return StopRequest(sources: sources)
    }
}
