import Foundation
import NIOCore
import NIOPosix

extension ConfigurationCheck {
    /// Whether `serve` could listen where it is told to: COFFER_HOSTNAME names an address of this
    /// machine, and each port is one this account may take. Each is bound as `serve`'s listeners
    /// bind (SwiftNIO's `ServerBootstrap`, SO_REUSEADDR) and closed at once. A port in use now is
    /// only noted: the server whose configuration is checked may be the one holding it.
    mutating func checkListening(_ configuration: ServerConfiguration) async {
        var ports = [(configuration.port, "COFFER_PORT")]
        // The same port twice is refused by `checkPorts` already.
        if let device = configuration.devicePort, device == 0 || device != configuration.port {
            ports.append((device, "COFFER_DEVICE_PORT"))
        }
        let host = configuration.hostname
        for (port, setting) in ports {
            do {
                let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .bind(host: host, port: port).get()
                try? await channel.close()
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                facts.append("\(host):\(port) is in use now (serve needs it free)")
            } catch let error as IOError {
                problems.append("cannot listen on \(host):\(port) (COFFER_HOSTNAME, \(setting)): \(String(cString: strerror(error.errnoCode)))")
            } catch let error as SocketAddressError.UnknownHost {
                return problems.append("COFFER_HOSTNAME (--hostname) \(host) names no address: \(error.errorDescription)")
            } catch {
                problems.append("cannot listen on \(host):\(port) (COFFER_HOSTNAME, \(setting)): \(error)")
            }
        }
    }
}
