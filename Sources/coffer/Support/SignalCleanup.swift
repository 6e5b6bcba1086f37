import CofferFormat
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Removes unfinished outputs when the user interrupts the command (Ctrl-C, SIGTERM, SIGHUP).
enum SignalCleanup {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func install() {
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                AtomicOutput.discardAllPending()
                exit(128 + signalNumber)
            }
            source.resume()
            sources.append(source)
        }
    }
}
