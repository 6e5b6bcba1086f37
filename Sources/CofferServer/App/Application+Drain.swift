import Vapor

extension Application {
    /// Stops both ports gracefully, together: neither accepts new connections, requests in flight
    /// are answered (with `connection: close`), idle keep-alive connections are closed, and this
    /// returns when every connection has closed or after the ports' shutdown timeouts (10 s each).
    ///
    /// Call it before `asyncShutdown()`, which then flushes what the periodic work holds (reports,
    /// usage counts) and closes the database: nothing accepted afterwards can be lost, and no
    /// request in flight finds the database closed. Calling it again does nothing.
    public func drainListeners() async {
        let listener = storage[DeviceListener.Key.self]
        async let device: Void? = listener?.drain()
        await server.shutdown()
        _ = await device
    }
}
