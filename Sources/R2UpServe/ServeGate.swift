import Foundation
import Synchronization

/// Who may use the server: the one-time token, the sessions it (or the password) opened, each
/// session's CSRF token, and the throttle on wrong passwords. Secrets live only here.
final class ServeGate: Sendable {
    private struct State {
        var token: String?
        /// Session id → its CSRF token.
        var sessions: [String: String] = [:]
        /// Notices to show once, by session id (what an action did).
        var notices: [String: String] = [:]
        var failedLogins: [Date] = []
    }

    private let state: Mutex<State>
    let password: String?
    /// The cookie's name carries the port: cookies are shared by every port of a host.
    let cookieName: String
    static let maxSessions = 1000

    init(password: String?, port: Int) {
        state = Mutex(State(token: password == nil ? Self.random() : nil))
        self.password = password
        cookieName = "r2up_session_\(port)"
    }

    /// The one-time token for the URL printed at start; nil with a password.
    var startToken: String? { state.withLock { $0.token } }

    /// A session for the token, once: a second use of the same token opens nothing.
    func redeem(token: String) -> String? {
        state.withLock { state in
            guard let expected = state.token, Self.same(token, expected) else { return nil }
            state.token = nil
            return Self.open(&state)
        }
    }

    /// A session for the password. After ten wrong ones within a minute each further try waits
    /// a second first, so guessing is slow.
    func login(password given: String) async -> String? {
        guard let password else { return nil }
        let recent = state.withLock { state in
            state.failedLogins.removeAll { $0 < Date().addingTimeInterval(-60) }
            return state.failedLogins.count
        }
        if recent >= 10 { try? await Task.sleep(for: .seconds(1)) }
        return state.withLock { state in
            guard Self.same(given, password) else {
                state.failedLogins.append(Date())
                return nil
            }
            return Self.open(&state)
        }
    }

    /// The CSRF token of a session, nil when the id names none.
    func csrf(session: String) -> String? { state.withLock { $0.sessions[session] } }

    func setNotice(_ text: String, session: String) { state.withLock { $0.notices[session] = text } }

    func takeNotice(session: String) -> String? { state.withLock { $0.notices.removeValue(forKey: session) } }

    private static func open(_ state: inout State) -> String {
        if state.sessions.count >= maxSessions, let old = state.sessions.keys.first { state.sessions.removeValue(forKey: old) }
        let id = random()
        state.sessions[id] = random()
        return id
    }

    /// 32 random bytes as hex (the system's CSPRNG).
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Compares in time that does not depend on where the strings differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
