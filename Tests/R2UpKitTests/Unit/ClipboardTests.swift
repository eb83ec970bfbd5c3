import Foundation
import Testing
@testable import R2UpKit

@Suite("Clipboard: tool discovery and OSC 52")
struct ClipboardTests {
    @Test("OSC 52 is ESC ] 52 ; c ; base64 BEL")
    func osc52() {
        #expect(Clipboard.osc52("https://p.example/a b") == "\u{1B}]52;c;aHR0cHM6Ly9wLmV4YW1wbGUvYSBi\u{07}")
    }

    @Test("tools are found on the injected PATH in candidate order, executables only")
    func discovery() throws {
        let folder = FileManager.default.temporaryDirectory.path + "/r2up-clip-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (folderName, name, mode) in [("one", "xsel", 0o755), ("one", "wl-copy", 0o644), ("two", "xclip", 0o755)] {
            try FileManager.default.createDirectory(atPath: "\(folder)/\(folderName)", withIntermediateDirectories: true)
            let path = "\(folder)/\(folderName)/\(name)"
            _ = FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\n".utf8))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        }
        try FileManager.default.createDirectory(atPath: "\(folder)/two/pbcopy", withIntermediateDirectories: true)
        let clipboard = Clipboard(environment: ["PATH": "\(folder)/one:\(folder)/two"])
        #expect(clipboard.availableTools().map(\.name) == ["xclip", "xsel"])
        #expect(clipboard.availableTools().first?.path == "\(folder)/two/xclip")
        #expect(clipboard.availableTools().first?.arguments == ["-selection", "clipboard"])
        #expect(Clipboard(environment: [:]).availableTools().isEmpty)
    }

    @Test("no tool and no terminal: not copied, with the reason; with a terminal: OSC 52")
    func fallbacks() {
        let clipboard = Clipboard(environment: ["PATH": "/nonexistent"])
        #expect(clipboard.copy("u") == .notCopied(reason: "no clipboard tool found (install wl-clipboard, xclip or xsel)"))
        let written = Written()
        #expect(clipboard.copy("u", terminal: { written.append($0) }) == .terminal)
        #expect(written.text == "\u{1B}]52;c;dQ==\u{07}")
    }

    final class Written: @unchecked Sendable {
        private let lock = NSLock()
        private var value = ""
        func append(_ text: String) { lock.withLock { value += text } }
        var text: String { lock.withLock { value } }
    }
}
