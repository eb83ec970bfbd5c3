import Foundation
import Testing
@testable import R2UpTransfer

/// The transfer engine as a task executor: tasks that prefer it run on its thread, resume
/// there after a transfer, and still finish when the engine has stopped.
@Suite("TransferEngine as a task executor")
struct TransferEngineExecutorTests {
    @Test("a task that prefers the engine runs on the transfer thread, before and after a transfer")
    func runsOnTransferThread() async throws {
        let engine = try TransferEngine()
        defer { engine.shutdown() }
        let port = try TransferEngineTests.closedPort()
        let places = await withTaskExecutorPreference(engine) { () async -> [String] in
            let before = engine.isEngineThread ? "engine" : "elsewhere"
            do {
                _ = try await engine.perform(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/bucket/key"))
                return ["the request to a closed port succeeded"]
            } catch {
                guard (error as? TransferError)?.kind == .connectionRefused else { return ["failed with \(error)"] }
            }
            return [before, engine.isEngineThread ? "engine" : "elsewhere"]
        }
        #expect(places == ["engine", "engine"])
    }

    @Test("a task that prefers a stopped engine still runs to its end")
    func stoppedEngineStillRunsTasks() async throws {
        let engine = try TransferEngine()
        engine.shutdown()
        try await Task.sleep(for: .milliseconds(200))  // the loop ends
        #expect(!engine.isEngineThread)
        let value = await withTaskExecutorPreference(engine) { () async -> Int in
            await Task.yield()
            return 42
        }
        #expect(value == 42)
    }
}
