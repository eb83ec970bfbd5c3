import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
public import R2UpKit
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `r2up serve`: the seeds' screens over one session, on loopback unless a password guards it.
public struct ServeServer: Sendable {
    let session: R2UpSession
    let options: ServeOptions

    /// A server for `session`'s store, queue and settings; nothing listens until ``run(onListening:)``.
    public init(session: R2UpSession, options: ServeOptions) {
        self.session = session
        self.options = options
    }

    /// Listens until SIGINT or SIGTERM, then stops taking requests, cancels the uploads it
    /// started (they stay queued, resumable) and returns.
    /// - Parameter onListening: told the URL to open once the port is bound (with the one-time
    ///   token, or the login page when a password guards the server).
    /// - Throws: ``ServeError`` when the address cannot be bound.
    public func run(onListening: @escaping @Sendable (String) -> Void) async throws(ServeError) {
        let port = try Self.preflight(host: options.host, port: options.port).get()
        ProcessMemory.limitArenas()
        let library = Library(session: session, roots: options.roots)
        let idle = IdleRelease()
        let feed = LiveFeed(library: library, idle: idle)
        // The Library is read before the URL is printed: the first page renders without a read of
        // its own (a store that cannot be read now is said by the pages, which try again).
        _ = try? await feed.reads.value()
        let gate = ServeGate(password: options.password, port: port)
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        let router = Self.router(gate: gate, hosts: Self.hosts(options, port: port), library: library, feed: feed, idle: idle)
        // Logs would name paths and sessions: the server keeps none (errors reach the browser as pages).
        let logger = Logger(label: "r2up.serve") { _ in SwiftLogNoOpLogHandler() }
        let url = gate.startToken.map { "http://\(host):\(port)/?token=\($0)" } ?? "http://\(host):\(port)/login"
        let listening = Mutex(false)
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { loops.shutdownGracefully { _ in } }
        let app = Application(
            router: router,
            // An idle connection is closed after a while (a client that sent half a request and
            // stopped); a page's live stream is a request in progress, never idle.
            server: .http1(configuration: .init(idleTimeout: .seconds(30))),
            configuration: .init(address: .hostname(options.host, port: port), serverName: nil),
            onServerRunning: { _ in
                listening.withLock { $0 = true }
                onListening(url)
            },
            // Two threads for the sockets whatever the machine (NIO's shared group has one a core):
            // pages are rendered on Swift's pool, the library is read on its own queue.
            eventLoopGroupProvider: .shared(loops),
            logger: logger)
        // Services stop in reverse order: the feed first, which ends the pages' live streams, so
        // the server then has no open request to wait for.
        var configuration = ServiceGroupConfiguration(services: [app, feed], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A connection that never finishes its request must not hold the stop up.
        configuration.maximumGracefulShutdownDuration = .seconds(5)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch {
            await feed.drain()
            // Once listening, an error can only be the stop itself (a connection cut at the deadline).
            if !listening.withLock({ $0 }) { throw .badInput("cannot listen on \(host):\(port): \(error)") }
            return
        }
        await feed.drain()
    }

    /// The Host header values the server answers to (lowercased): the address it listens on,
    /// loopback's names when that is loopback, and the extra names the options allow.
    static func hosts(_ options: ServeOptions, port: Int) -> Set<String> {
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        var hosts: Set<String> = ["\(host):\(port)".lowercased()]
        if ServeOptions.isLoopback(options.host) { hosts.formUnion(["localhost:\(port)", "127.0.0.1:\(port)", "[::1]:\(port)"]) }
        for name in options.hostNames { hosts.formUnion([name.lowercased(), "\(name.lowercased()):\(port)"]) }
        return hosts
    }

    /// Every request's way: the gate, then the routes (also what the fuzz harness drives).
    static func router(gate: ServeGate, hosts: Set<String>, library: Library, feed: LiveFeed, idle: IdleRelease) -> Router<ServeContext> {
        let router = Router(context: ServeContext.self)
        router.add(middleware: GateMiddleware(gate: gate, hosts: hosts, idle: idle))
        Routes(library: library, feed: feed, gate: gate).add(to: router)
        return router
    }

    /// The port `host:port` will listen on (port 0: a free one the system picks), or why it
    /// cannot (taken, not this machine's, not allowed): bound once here, before the server
    /// binds it, so a refusal is one clear line.
    static func preflight(host: String, port: Int) -> Result<Int, ServeError> {
        let name = host == "localhost" ? "127.0.0.1" : host
        let isV6 = name.contains(":")
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .failure(.badInput("cannot open a socket: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var storage = sockaddr_storage()
        var length: socklen_t
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, name, &address.sin6_addr)
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in6.self) }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, name, &address.sin_addr)
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in.self) }
        }
        let bound = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else {
            let shown = isV6 ? "[\(host)]:\(port)" : "\(host):\(port)"
            let reason =
                switch errno {
                case EADDRINUSE: "the address is in use (another r2up serve?); pick another with --listen"
                case EADDRNOTAVAIL: "that address is not this machine's"
                case EACCES: "ports below 1024 need root; pick another with --listen"
                default: String(cString: strerror(errno))
                }
            return .failure(.badInput("cannot listen on \(shown): \(reason)"))
        }
        let chosen = withUnsafeBytes(of: &storage) { raw in
            isV6 ? raw.load(as: sockaddr_in6.self).sin6_port : raw.load(as: sockaddr_in.self).sin_port
        }
        return .success(Int(UInt16(bigEndian: chosen)))
    }
}
