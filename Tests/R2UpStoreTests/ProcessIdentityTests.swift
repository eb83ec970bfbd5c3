import Testing
@testable import R2UpStore

/// How a lease tells whether its owner still runs, from `/proc/PID/stat` lines.
@Suite("Process identity")
struct ProcessIdentityTests {
    static func stat(name: String, state: String, start: Int64) -> ArraySlice<UInt8> {
        // Fields 1–22 of proc(5): pid (comm) state ppid … starttime.
        let tail = (4...21).map { "\($0)" }.joined(separator: " ")
        return ArraySlice(Array("4242 (\(name)) \(state) \(tail) \(start) 99 100\n".utf8))
    }

    @Test("the start time is field 22, after a name that holds spaces and parentheses")
    func startTime() {
        #expect(ProcessIdentity.parseStartTime(Self.stat(name: "r2up", state: "S", start: 123_456)) == 123_456)
        #expect(ProcessIdentity.parseStartTime(Self.stat(name: "a (b) c", state: "R", start: 7)) == 7)
        #expect(ProcessIdentity.parseStartTime(ArraySlice(Array("4242 (r2up) S 1 2".utf8))) == nil)
    }

    @Test("a process that exited and waits to be reaped (zombie) or is dying holds no lease")
    func zombie() {
        #expect(ProcessIdentity.parseStartTime(Self.stat(name: "r2up", state: "Z", start: 123_456)) == nil)
        #expect(ProcessIdentity.parseStartTime(Self.stat(name: "r2up", state: "X", start: 123_456)) == nil)
        #expect(ProcessIdentity.parseStartTime(Self.stat(name: "r2up", state: "D", start: 123_456)) == 123_456)
        #expect(ProcessIdentity.current.isAlive)
    }
}
