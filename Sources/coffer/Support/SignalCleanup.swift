import CofferFormat
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops the command cleanly when the user interrupts it (Ctrl-C, SIGTERM, SIGHUP).
///
/// The handler asks running operations to stop (``Cancellation``); they throw between chunks, the
/// command removes its unfinished output and exits 130. Should the command not stop within five
/// seconds, the handler removes the unfinished outputs itself and exits. SIGPIPE is ignored so a
/// closed pipe surfaces as a write error (exit 74) instead of killing the process.
enum SignalCleanup {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func install() {
        signal(SIGPIPE, SIG_IGN)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                Cancellation.request()
                DispatchQueue.global().asyncAfter(deadline: .now() + 5) {
                    AtomicOutput.discardAllPending()
                    exit(128 + signalNumber)
                }
            }
            source.resume()
            sources.append(source)
        }
    }
}
