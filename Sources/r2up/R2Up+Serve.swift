import ArgumentParser
import Foundation
import R2UpKit
import R2UpServe

extension R2Up {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the Library, Queue and History screens to a browser, live.",
            discussion: """
                The first line on stdout is the URL to open; it carries a one-time token that gives \
                the browser its session (--json: {"url": …}). The pages follow every change within a \
                second, whichever process makes it (a cron sync, a push in another terminal), and their \
                actions (Upload All to Cloud, Retry Failed Uploads, Upload, Download) go through the \
                same queue and guards as push and fetch. It listens on loopback; any other address \
                needs --password-file (a file only its owner can read), and names besides the address \
                that browsers use go in --host-name. Ctrl-C (or SIGTERM) stops it; uploads it started \
                stay queued for the next run. See docs/guides/serve.md.
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: "The address and port to listen on (port 0: any free one).")
        var listen = "127.0.0.1:8417"

        @Flag(help: "Print the URL as JSON: {\"url\": …}.")
        var json = false

        @Option(help: "A file holding the password browsers log in with; needed to listen beyond loopback.")
        var passwordFile: String?

        @Option(help: "Another name browsers reach the server by (a LAN name, a proxy's); repeatable.")
        var hostName: [String] = []

        @Argument(help: "Folders whose tracks the Library shows (default: every track r2up knows).")
        var folders: [String] = []

        func run() async throws {
            let options = try checkedOptions()
            let session: R2UpSession
            do {
                session = try R2UpSession(R2UpSession.Configuration(settings: try global.settings()))
            } catch {
                throw CommandFailure(error)
            }
            let json = json
            do {
                try await ServeServer(session: session, options: options).run { url in
                    // One line either way (the URL holds only ASCII letters, digits and punctuation).
                    Terminal.output(json ? "{\"url\": \"\(url)\"}" : url)
                }
            } catch {
                throw CommandFailure(Diagnosis(category: .badInput, message: error.message))
            }
        }

        /// The flags as the server takes them: a bad one is one line and exit 2, before anything listens.
        func checkedOptions() throws -> ServeOptions {
            func refuse(_ message: String) -> CommandFailure { CommandFailure(Diagnosis(category: .badInput, message: message)) }
            let address: (host: String, port: Int)
            switch ServeOptions.parseListen(listen) {
            case .success(let parsed): address = parsed
            case .failure(let error): throw refuse(error.message)
            }
            var password: String?
            if let passwordFile {
                switch ServeOptions.readPassword(at: passwordFile) {
                case .success(let text): password = text
                case .failure(let error): throw refuse(error.message)
                }
            } else if !ServeOptions.isLoopback(address.host) {
                throw refuse("listening on \(TextColumns.printable(listen)) (not loopback) needs --password-file")
            }
            for name in hostName where name.isEmpty || name.contains(where: { $0 == "/" || $0.isWhitespace || $0 == "@" }) {
                throw refuse("--host-name '\(TextColumns.printable(name))' is not a host name")
            }
            var roots: [String] = []
            for folder in folders {
                let path = URL(fileURLWithPath: folder).standardizedFileURL.path
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
                    throw refuse("\(TextColumns.printable(folder)): no such folder")
                }
                roots.append(path)
            }
            return ServeOptions(host: address.host, port: address.port, roots: roots, hostNames: hostName, password: password)
        }
    }
}
