import Synchronization
import Testing
import R2UpModel
@testable import R2UpTransfer

/// The request that names the server goes out before the run's first file sizes the depth.
@Suite("The naming request's slot")
struct NamingSlotTests {
    @Test("it holds a slot but sizes nothing: the first file still sizes the start")
    func sizesNothing() async throws {
        let bigPart: Int64 = 8 << 20
        let fresh = TransferSlots(controller: DepthController())
        fresh.prepare(bytes: bigPart)

        let named = TransferSlots(controller: DepthController())
        let inFlight = try await named.withUnsizedSlot { () throws(UploadError) -> Int in named.limit }
        #expect(inFlight == 4)  // the depth before anything sized it
        named.prepare(bytes: bigPart)
        #expect(named.limit == fresh.limit)
        #expect(named.limit < 8)

        // A HEAD in an ordinary slot (0 bytes) would have sized the start for tiny requests.
        let headFirst = TransferSlots(controller: DepthController())
        _ = try await headFirst.withSlot(bytes: 0) { () throws(S3ClientError) -> Int in 0 }
        headFirst.prepare(bytes: bigPart)
        #expect(headFirst.limit > fresh.limit)
    }

    @Test("a pinned depth of one holds: a write waits for the naming request's slot")
    func pinnedHolds() async throws {
        let slots = TransferSlots(controller: DepthController(pinned: 1))
        let order = Log()
        let gate = AsyncStream<Void>.makeStream()
        let probe = Task {
            try await slots.withUnsizedSlot { () throws(UploadError) -> Void in
                order.add("probe")
                for await _ in gate.stream { break }
                order.add("probe answered")
            }
        }
        while order.items.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
        let write = Task {
            await slots.acquire(bytes: 1000)
            order.add("write")
            slots.release()
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(order.items == ["probe"])
        gate.continuation.yield()
        try await probe.value
        await write.value
        #expect(order.items == ["probe", "probe answered", "write"])
    }

    /// What happened, in order, from any task.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var items: [String] { entries.withLock { $0 } }
    }
}
