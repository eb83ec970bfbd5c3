import Foundation

/// What `r2up serve` was asked for, checked: where to listen, who may connect, which folders.
public struct ServeOptions: Sendable {
    /// The address to bind: an IPv4 or IPv6 literal, or `localhost`.
    public var host: String
    /// 0 lets the system choose a free port (the URL printed names it).
    public var port: Int
    /// The folders whose tracks the Library shows (absolute); empty: every track r2up knows.
    public var roots: [String]
    /// Names besides the listen address that the Host header may carry (a reverse proxy's, a LAN name).
    public var hostNames: [String]
    /// Needed to listen anywhere but loopback: a browser logs in with it instead of the token.
    public var password: String?

    /// Options as given; ``ServeOptions/parseListen(_:)`` and ``ServeOptions/readPassword(at:)`` check their parts.
    public init(host: String, port: Int, roots: [String], hostNames: [String] = [], password: String? = nil) {
        self.host = host
        self.port = port
        self.roots = roots
        self.hostNames = hostNames
        self.password = password
    }

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (loopback) into its parts.
    public static func parseListen(_ text: String) -> Result<(host: String, port: Int), ServeError> {
        let refuse = ServeError.badInput("--listen '\(printable(text))' is not HOST:PORT (e.g. 127.0.0.1:8417)")
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return .failure(refuse) }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return .failure(refuse) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if host.isEmpty { host = "127.0.0.1" }
        guard portText.allSatisfy(\.isASCII), let port = Int(portText), (0...65535).contains(port) else {
            return .failure(.badInput("--listen '\(printable(text))': the port must be a number from 0 to 65535"))
        }
        let hostText = String(host)
        guard hostText == "localhost" || isAddress(hostText) else {
            return .failure(.badInput("--listen '\(printable(text))': '\(printable(hostText))' is not an IP address (or localhost)"))
        }
        return .success((hostText, port))
    }

    /// Reads a password file: it must exist, be readable by its owner only, and hold a password
    /// (its first line; a trailing newline is not part of it).
    public static func readPassword(at path: String) -> Result<String, ServeError> {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return .failure(.badInput("the password file \(printable(path)) does not exist or cannot be read"))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.badInput("the password file \(printable(path)) is not a file")) }
        if info.st_mode & 0o077 != 0 {
            return .failure(.badInput("the password file \(printable(path)) is readable by others; chmod 600 it"))
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096 else {
            return .failure(.badInput("the password file \(printable(path)) cannot be read (or is over 4 KiB)"))
        }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
        guard !password.isEmpty else { return .failure(.badInput("the password file \(printable(path)) is empty")) }
        return .success(password)
    }

    static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Control characters shown as `?`, so a line never breaks a terminal.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}

/// Why `r2up serve` did not start, as one line and an exit code.
public enum ServeError: Error, Sendable, Equatable {
    /// A bad flag, a taken or unusable address, a bad password file, a missing folder: exit 2.
    case badInput(String)

    /// The line to print.
    public var message: String {
        switch self {
        case .badInput(let text): text
        }
    }
}
