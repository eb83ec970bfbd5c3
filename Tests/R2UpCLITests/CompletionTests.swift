import Foundation
import Testing

/// Shell completions come from the command definitions; the man page in docs/ is kept current.
@Suite("Completions and the man page")
struct CompletionTests {
    static let subcommands = ["push", "pull", "sync", "queue", "retry", "history", "copy-url", "status", "ls", "presign", "rm", "config", "doctor", "catalog", "watch", "cat", "offload", "fetch", "du", "serve"]

    @Test("bash, zsh and fish completion scripts name every subcommand; the bash one parses", arguments: ["bash", "zsh", "fish"])
    func completions(shell: String) async throws {
        let folder = try TemporaryFolder()
        let run = try await CLI.run(["--generate-completion-script", shell], environment: CLI.environment(home: folder.path))
        #expect(run.status == 0)
        for name in Self.subcommands { #expect(run.stdout.contains(name), "\(shell) completion lacks \(name)") }
        if shell == "bash" {
            let script = folder.write("r2up.bash", run.stdout)
            let syntax = try await ProcessRunner.run("/bin/bash", ["-n", script], environment: [:])
            #expect(syntax.status == 0, "\(syntax.stderr)")
        }
    }

    @Test("docs/r2up.1 describes every subcommand (regenerate with scripts/manual.sh)")
    func manPage() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/r2up.1"), encoding: .utf8)
        for name in Self.subcommands { #expect(page.contains(".It Em \(name)\n"), "docs/r2up.1 lacks \(name)") }
        // r2up's own sections (scripts/manual.sh), once each, after the generated ones.
        for section in [".Sh \"EXIT STATUS\"\n", ".Sh ENVIRONMENT\n", ".Sh FILES\n"] {
            #expect(page.components(separatedBy: section).count == 2, "docs/r2up.1 needs one \(section)")
        }
        for option in ["Fl r , -recursive", "Fl -grep", "Fl -since", "Fl -dry-run"] {
            #expect(page.contains(option), "docs/r2up.1 lacks \(option): run scripts/manual.sh")
        }
    }
}
