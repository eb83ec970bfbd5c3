import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
@testable import r2up

@Suite("Status report: groups, icons, styles")
struct StatusReportTests {
    static func track(_ path: String, _ upload: UploadState, download: DownloadState = .none, key: String? = nil, error: String? = nil)
        -> TrackRecord
    {
        TrackRecord(
            path: path, size: 1, mtimeNs: 1, uploadState: upload, downloadState: download, key: key, lastError: error,
            updatedAt: Date(timeIntervalSince1970: 0))
    }

    @Test("tracks group by parent folder, folders and tracks sorted by path")
    func grouping() {
        let report = StatusReport(tracks: [
            Self.track("/m/B/2.flac", .none), Self.track("/m/A/1.flac", .uploaded), Self.track("/m/B/1.flac", .uploading),
            Self.track("/m/A/sub/3.flac", .error),
        ])
        #expect(report.groups.map(\.folder) == ["/m/A", "/m/A/sub", "/m/B"])
        #expect(report.groups[2].tracks.map(\.name) == ["1.flac", "2.flac"])
        #expect(report.groups[2].summary.kind == .uploading)
        #expect(report.groups[0].summary.kind == .allUploaded)
    }

    @Test("a missing file with a cloud copy is cloud only; the icon priority holds")
    func icons() {
        let report = StatusReport(
            tracks: [
                Self.track("/m/a", .none, key: "a"), Self.track("/m/b", .uploaded, download: .downloading, key: "b"),
                Self.track("/m/c", .none, download: .error, error: "timeout"),
            ],
            isLocal: { $0.path != "/m/a" })
        #expect(report.groups[0].tracks.map(\.icon) == [.cloudOnly, .downloading, .downloadError])
        #expect(report.lines(style: TerminalStyle(ascii: false, colour: false)) == [
            "/m  (3)  ⇡ 1/3", "  ☁ a", "  ⇣ b", "  ⚠ c: timeout",
        ])
    }

    @Test("an error that starts with the track's path says it once")
    func errorNamesTrackOnce() {
        let report = StatusReport(tracks: [
            Self.track("/m/a.flac", .error, error: "/m/a.flac: cannot be read: Permission denied"),
            Self.track("/m/b.flac", .error, error: "/m/other.flac: held"),
        ])
        #expect(report.lines(style: TerminalStyle(ascii: false, colour: false)) == [
            "/m  (2)  ⚠ 0/2", "  ⚠ a.flac: cannot be read: Permission denied", "  ⚠ b.flac: /m/other.flac: held",
        ])
    }

    @Test("ANSI colour wraps the glyphs and the group label only")
    func colour() {
        let report = StatusReport(tracks: [Self.track("/m/a", .uploading), Self.track("/m/b", .none)])
        #expect(report.lines(style: TerminalStyle(ascii: true, colour: true)) == [
            "/m  (2)  \u{1B}[38;5;208m* 0/2\u{1B}[0m", "  \u{1B}[38;5;208m*\u{1B}[0m a", "    b",
        ])
    }

    @Test("control characters in names and errors cannot reach the terminal")
    func sanitised() {
        let report = StatusReport(tracks: [Self.track("/m/a\u{1B}]52;c;x\u{7}.flac", .error, error: "bad\nline")])
        #expect(report.lines(style: TerminalStyle(ascii: true, colour: false)) == [
            "/m  (1)  ! 0/1", "  ! a?]52;c;x?.flac: bad?line",
        ])
    }

    @Test("UTF-8 locale: LC_ALL, then LC_CTYPE, then LANG; none is ASCII", arguments: [
        ([:], false), (["LANG": "C"], false), (["LANG": "C.UTF-8"], true), (["LANG": "en_US.utf8"], true),
        (["LC_ALL": "C", "LANG": "en_US.UTF-8"], false), (["LC_ALL": "", "LANG": "de_DE.UTF-8"], true),
        (["LC_CTYPE": "POSIX", "LANG": "en_US.UTF-8"], false), (["LC_CTYPE": "C.UTF-8", "LANG": "C"], true),
    ])
    func locale(environment: [String: String], utf8: Bool) {
        #expect(TerminalStyle.localeIsUTF8(environment) == utf8)
        #expect(TerminalStyle(environment: environment, isTerminal: false).ascii == !utf8)
    }

    @Test("colour only on a terminal and without NO_COLOR (an empty NO_COLOR does not count)")
    func colourRules() {
        #expect(TerminalStyle(environment: [:], isTerminal: true).colour)
        #expect(!TerminalStyle(environment: [:], isTerminal: false).colour)
        #expect(!TerminalStyle(environment: ["NO_COLOR": "1"], isTerminal: true).colour)
        #expect(TerminalStyle(environment: ["NO_COLOR": ""], isTerminal: true).colour)
    }

    @Test("JSON keeps every key, null where unknown")
    func json() throws {
        let report = StatusReport(tracks: [Self.track("/m/a", .none)])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(report), as: UTF8.self)
        #expect(text == """
            [{"folder":"/m","summary":{"errors":0,"name":null,"total":1,"uploaded":0,"uploading":0},\
            "tracks":[{"changedSinceUpload":false,"downloadState":"none","etag":null,"icon":"localOnly","interrupted":false,"key":null,"lastError":null,\
            "path":"/m/a","pendingCopyKey":null,"uploadState":"none"}]}]
            """)
    }
}
