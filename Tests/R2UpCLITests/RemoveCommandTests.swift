import Foundation
import Testing

/// Issue 29 item 4: `rm --prefix` means a folder, as `ls` does; `--raw-prefix` keeps the text
/// as typed; `rm -` takes keys on stdin.
@Suite("r2up rm")
struct RemoveCommandTests {
    static func keys(_ scope: String, _ env: [String: String], _ db: String) async throws -> [String] {
        let ls = try await CLI.run(["ls", "-r", scope, "--json", "--db", db], environment: env)
        let listing = try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [String: Any] ?? [:]
        let objects = listing["objects"] as? [[String: Any]] ?? []
        return objects.compactMap { $0["key"] as? String }.map { String($0.dropFirst(scope.count)) }.sorted()
    }

    @Test("rm --prefix 'A/Low Tide (2008)' removes that folder only, never 'A/Low Tide (2008) [Remaster]/'; --raw-prefix takes both")
    func prefixIsAFolder() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let db = folder.path + "/db.sqlite"
        let scope = "tests/rm-folder-\(UUID().uuidString.prefix(8))/"
        let file = folder.write("t.m4a", "track bytes")
        for key in ["A/Low Tide (2008)/01 Tide.m4a", "A/Low Tide (2008)/cd2/02 Ebb.m4a", "A/Low Tide (2008) [Remaster]/01 Tide.m4a", "A/Low Tide (2008).txt"] {
            let push = try await CLI.run(["push", file, "--key", scope + key, "--db", db], environment: env)
            #expect(push.status == 0, "\(push.stderr)")
        }
        let dry = try await CLI.run(["rm", "--prefix", scope + "A/Low Tide (2008)", "--dry-run", "--db", db], environment: env)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout == "would delete \(scope)A/Low Tide (2008)/01 Tide.m4a\nwould delete \(scope)A/Low Tide (2008)/cd2/02 Ebb.m4a\n")
        let run = try await CLI.run(["rm", "--prefix", scope + "A/Low Tide (2008)", "--yes", "--db", db], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try await Self.keys(scope, env, db) == ["A/Low Tide (2008) [Remaster]/01 Tide.m4a", "A/Low Tide (2008).txt"])

        let raw = try await CLI.run(["rm", "--raw-prefix", scope + "A/Low Tide (2008)", "--yes", "--db", db], environment: env)
        #expect(raw.status == 0, "\(raw.stderr)")
        #expect(try await Self.keys(scope, env, db) == [])
    }

    @Test("rm - deletes the keys read from stdin, one a line; an empty stdin deletes nothing (exit 2)")
    func keysOnStdin() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let db = folder.path + "/db.sqlite"
        let scope = "tests/rm-stdin-\(UUID().uuidString.prefix(8))/"
        let file = folder.write("t.m4a", "track bytes")
        for key in ["one.m4a", "two words.m4a", "three.m4a"] {
            let push = try await CLI.run(["push", file, "--key", scope + key, "--db", db], environment: env)
            #expect(push.status == 0, "\(push.stderr)")
        }
        let run = try await CLI.run(["rm", "-", "--db", db], environment: env, input: "\(scope)one.m4a\n\n\(scope)two words.m4a\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "deleted \(scope)one.m4a\ndeleted \(scope)two words.m4a\n")
        #expect(try await Self.keys(scope, env, db) == ["three.m4a"])

        let empty = try await CLI.run(["rm", "-", "--db", db], environment: env, input: "")
        #expect(empty.status == 2)
        #expect(empty.stderr == "r2up: rm -: no keys on stdin; nothing deleted\n")
        #expect(try await Self.keys(scope, env, db) == ["three.m4a"])
        _ = try await CLI.run(["rm", scope + "three.m4a", "--db", db], environment: env)
    }
}
