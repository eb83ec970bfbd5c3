import Testing
@testable import R2UpTransfer

/// Response header lines as curl delivers them, CRLF included.
@Suite("Header lines")
struct HeaderLineTests {
    private func parse(_ text: String) -> HeaderLine? {
        Array(text.utf8).withUnsafeBufferPointer { HeaderLine($0) }
    }

    @Test("status lines give their code", arguments: [
        ("HTTP/1.1 200 OK\r\n", 200), ("HTTP/2 404\r\n", 404), ("HTTP/1.1 100 Continue\r\n", 100), ("HTTP/1.1\r\n", 0),
        // Fuzzing (scripts/fuzz.sh reply-head) found "HTTP/1.1 20061" read as status 2006.
        ("HTTP/1.1 20061Aa\r\n", 0), ("HTTP/1.1 2000 OK\r\n", 0), ("HTTP/1.1 99999999999999999999\r\n", 0),
    ])
    func status(line: String, code: Int) {
        #expect(parse(line) == .status(code))
    }

    @Test("fields: name lower-cased, value trimmed, colons in the value kept")
    func fields() {
        #expect(parse("ETag: \"abc\"\r\n") == .field(name: "etag", value: "\"abc\""))
        #expect(parse("X-Amz-Request-Id:\t42 \r\n") == .field(name: "x-amz-request-id", value: "42"))
        #expect(parse("Date: Mon, 23 Nov 2026 00:00:00 GMT\r\n") == .field(name: "date", value: "Mon, 23 Nov 2026 00:00:00 GMT"))
        #expect(parse("Empty:\r\n") == .field(name: "empty", value: ""))
        #expect(parse("x-amz-meta-títle: Café\r\n") == .field(name: "x-amz-meta-títle", value: "Café"))
    }

    @Test("blank and malformed lines are skipped")
    func skipped() {
        #expect(parse("\r\n") == nil)
        #expect(parse("no colon here\r\n") == nil)
    }
}
