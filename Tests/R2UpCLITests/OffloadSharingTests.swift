import Foundation
import Testing

/// Offload beside other r2up processes and over a wide-area link, and `rm`'s guard for the
/// objects offloaded tracks depend on.
@Suite("r2up offload: two processes, a wide-area link, rm's guard")
struct OffloadSharingTests {
    @Test("two offloads of one folder on one database at once: both exit 0, each track freed once, the rest counted as already cloud only")
    func twoProcesses() async throws {
        let folder = try TemporaryFolder()
        let names = (0..<80).map { String(format: "t%02d.m4a", $0) }
        let lib = try await OffloadFixtures.library(folder, names)
        async let first = CLI.run(lib.r2up(["offload", lib.dir, "--json"]), environment: lib.env)
        async let second = CLI.run(lib.r2up(["offload", lib.dir, "--json"]), environment: lib.env)
        let runs = try await [first, second]
        var freed = 0
        for run in runs {
            #expect(run.status == 0, "stderr: \(run.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect((json["kept"] as? [Any])?.isEmpty == true, "nothing kept: \(run.stdout)")
            let files = json["freedFiles"] as? Int ?? -1
            #expect(files + (json["alreadyCloudOnly"] as? Int ?? -1) == 80)
            freed += files
        }
        #expect(freed == 80, "each track freed by exactly one of the two")
        #expect(try PullFixtures.files(under: lib.dir).isEmpty)
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(Set(try PullFixtures.icons(status.stdout).values) == ["cloudOnly"])
    }

    @Test("through a 40 ms link the HEADs go deeper than the old fixed 4, and every track is still checked and freed")
    func adaptiveOverWideArea() async throws {
        let folder = try TemporaryFolder()
        let names = (0..<120).map { String(format: "t%03d.m4a", $0) }
        let lib = try await OffloadFixtures.library(folder, names)
        let server = try CLI.serverEnvironment()
        let relay = try await HelperServer.start(
            "wanrelay.py", ["--upstream", server["R2UP_ENDPOINT"] ?? "", "--rtt-ms", "40", "--setup-rtts", "2", "--max-seconds", "120"])
        defer { relay.stop() }
        var far = lib.env
        far["R2UP_ENDPOINT"] = relay.endpoint
        let run = try await CLI.run(lib.r2up(["offload", lib.dir, "--json"]), environment: far)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(json["freedFiles"] as? Int == 120)
        #expect(json["headRequests"] as? Int == 120)
        let depth = try #require(json["depth"] as? [String: Any], "offload --json carries the depth: \(run.stdout)")
        #expect(depth["mode"] as? String == "adaptive")
        #expect((depth["peak"] as? Int ?? 0) > 4, "\(depth)")

        let pinned = try await CLI.run(lib.r2up(["offload", lib.dir, "--concurrency", "600"]), environment: lib.env)
        #expect(pinned.status == 2)
        #expect(pinned.stderr.contains("--concurrency must be from 1 to 512, got 600"), "stderr: \(pinned.stderr)")
    }

    @Test("rm of the only copy of an offloaded track: refused with one line naming the file, exit 2, nothing deleted; --force deletes it")
    func removeGuard() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir + "/01.m4a"]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        let one = lib.prefix + "01.m4a"
        let two = lib.prefix + "02.m4a"

        let refused = try await CLI.run(lib.r2up(["rm", one, two]), environment: lib.env)
        #expect(refused.status == 2)
        #expect(refused.stderr == "r2up: \(one) is the only copy of \(lib.dir)/01.m4a (offloaded: cloud only); nothing deleted (r2up fetch it first, or --force)\n")
        #expect(refused.stdout.isEmpty)
        #expect(try await OffloadFixtures.objectText(one) == "01.m4a")
        #expect(try await OffloadFixtures.objectText(two) == "02.m4a", "nothing deleted: not the other key either")

        let prefix = try await CLI.run(lib.r2up(["rm", "--prefix", lib.prefix, "--yes"]), environment: lib.env)
        #expect(prefix.status == 2, "a folder delete is guarded too: \(prefix.stderr)")
        #expect(try await OffloadFixtures.objectText(two) == "02.m4a")

        // A track whose file is here is not the only copy.
        let local = try await CLI.run(lib.r2up(["rm", two]), environment: lib.env)
        #expect(local.status == 0, "stderr: \(local.stderr)")
        #expect(local.stdout == "deleted \(two)\n")

        let forced = try await CLI.run(lib.r2up(["rm", one, "--force"]), environment: lib.env)
        #expect(forced.status == 0, "stderr: \(forced.stderr)")
        #expect(forced.stdout == "deleted \(one)\n")
        let history = try await CLI.run(lib.r2up(["history", "--json"]), environment: lib.env)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
        #expect(rows.filter { !($0["deletedAt"] is NSNull) }.count == 2)
    }
}
