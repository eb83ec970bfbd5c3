import Foundation
import Testing
@testable import R2UpKit

@Suite("watch: inotify events and the timetable")
struct WatchLoopTests {
    /// One event as the kernel lays it out: wd, mask, cookie, len, then the NUL-padded name.
    func bytes(wd: Int32, mask: UInt32, cookie: UInt32 = 0, name: [UInt8], padded: Int) -> [UInt8] {
        var out: [UInt8] = []
        withUnsafeBytes(of: wd.littleEndian) { out += $0 }
        withUnsafeBytes(of: mask.littleEndian) { out += $0 }
        withUnsafeBytes(of: cookie.littleEndian) { out += $0 }
        withUnsafeBytes(of: UInt32(padded).littleEndian) { out += $0 }
        out += name + [UInt8](repeating: 0, count: padded - name.count)
        return out
    }

    #if os(Linux)
    @Test("events are parsed with their names; a truncated tail is dropped, never read past")
    func parse() {
        let close = UInt32(IN_CLOSE_WRITE)
        let buffer = bytes(wd: 3, mask: close, name: Array("take.wav".utf8), padded: 16)
            + bytes(wd: -1, mask: UInt32(IN_Q_OVERFLOW), name: [], padded: 0)
            + bytes(wd: 4, mask: UInt32(IN_MOVED_TO), cookie: 9, name: [0x66, 0xFF], padded: 16)
        let events = buffer.withUnsafeBytes { InotifyEvent.parse($0) }
        #expect(events == [
            InotifyEvent(descriptor: 3, mask: close, cookie: 0, name: "take.wav", rawName: nil),
            InotifyEvent(descriptor: -1, mask: UInt32(IN_Q_OVERFLOW), cookie: 0, name: nil, rawName: nil),
            InotifyEvent(descriptor: 4, mask: UInt32(IN_MOVED_TO), cookie: 9, name: nil, rawName: [0x66, 0xFF]),
        ])
        // A length that runs past the buffer, and a header cut short: nothing from them.
        let lying = bytes(wd: 3, mask: close, name: Array("a".utf8), padded: 16).prefix(20)
        #expect(Array(lying).withUnsafeBytes { InotifyEvent.parse($0) } == [])
        #expect([UInt8](repeating: 1, count: 15).withUnsafeBytes { InotifyEvent.parse($0) } == [])
    }
    #endif

    @Test("a file is due --min-age after its last event; later events move it later; folders and overflow")
    func timetable() {
        let start = ContinuousClock.now
        var loop = WatchLoop(minAge: .seconds(2))
        loop.nextFull = start + .seconds(600)
        var changes = WatchChanges()
        changes.files = [ExactPath("/m/b.wav"): start, ExactPath("/m/a.wav"): start + .seconds(1)]
        loop.merge(changes, now: start)
        #expect(loop.takeDue(now: start + .milliseconds(1999)) == [])
        #expect(loop.sleep(now: start + .milliseconds(1900)) == .milliseconds(100))
        // b.wav written again at 1.5 s: due at 3.5 s, after a.wav.
        changes.files = [ExactPath("/m/b.wav"): start + .milliseconds(1500)]
        loop.merge(changes, now: start + .milliseconds(1500))
        #expect(loop.takeDue(now: start + .seconds(3)) == ["/m/a.wav"])
        #expect(loop.takeDue(now: start + .seconds(4)) == ["/m/b.wav"])
        #expect(loop.isIdle)
        #expect(loop.sleep(now: start) == WatchLoop.tick)

        var more = WatchChanges()
        more.folders = ["/m/New"]
        more.unwatched = ["/m/Big"]
        more.everything = true
        loop.merge(more, now: start + .seconds(5))
        #expect(loop.fullPassDue(now: start + .seconds(5)))
        #expect(loop.takeFolders(now: start + .seconds(5)) == ["/m/New", "/m/Big"])
        #expect(loop.takeFolders(now: start + .seconds(6)) == [])
        #expect(loop.takeFolders(now: start + .seconds(5) + WatchOptions.unwatchedRescan) == ["/m/Big"])
    }

    @Test("an NFC name and its NFD twin are two files to the timetable (Linux keeps both)")
    func twins() {
        let start = ContinuousClock.now
        var loop = WatchLoop(minAge: .zero)
        let nfc = "/m/Caf\u{E9}.flac"
        let nfd = "/m/Cafe\u{301}.flac"
        #expect(nfc == nfd)  // as Swift Strings
        loop.schedule(nfc, at: start)
        loop.schedule(nfd, at: start)
        let due = loop.takeDue(now: start)
        #expect(due.map { Array($0.utf8) } == [Array(nfd.utf8), Array(nfc.utf8)])
    }

    @Test("a second run is told which command holds the lock")
    func lockNamesItsHolder() throws {
        let path = FileManager.default.temporaryDirectory.path + "/r2up-watch-lock-\(UUID().uuidString)"
        defer { unlink(path) }
        let lock = try SyncLock.acquire(path: path, holder: "watch")
        defer { withExtendedLifetime(lock) {} }
        // flock locks belong to the open file: a second open in this process is refused too.
        #expect(throws: SyncError.locked(pid: getpid(), command: "watch")) { try SyncLock.acquire(path: path) }
        #expect(SyncError.locked(pid: 7, command: "watch").description == "another r2up watch (pid 7) is running; use the wait option to wait for it")
    }
}
