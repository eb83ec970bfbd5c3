import Testing
@testable import r2up

/// A word that argument-parser would read as short flags (`-04 h.m4a` printed the help and exited
/// 0) is refused with one line; numbers, durations, flag groups and words after `--` pass.
@Suite("Leading-dash names")
struct DashedNameTests {
    @Test("file names with a dash first are refused, digits first too; the advice quotes a name as a shell must read it", arguments: [
        (["push", "-dash.wav"], "-dash.wav", "-dash.wav", "./-dash.wav"),
        (["push", "01 Intro.m4a", "-04 leading dash.m4a"], "-04 leading dash.m4a", "'-04 leading dash.m4a'", "'./-04 leading dash.m4a'"),
        (["push", "-4 chorus.m4a"], "-4 chorus.m4a", "'-4 chorus.m4a'", "'./-4 chorus.m4a'"),
        (["sync", "-04.m4a"], "-04.m4a", "-04.m4a", "./-04.m4a"),
        (["status", "-1 hits"], "-1 hits", "'-1 hits'", "'./-1 hits'"),
        (["push", "--dry-run", "-04h.m4a"], "-04h.m4a", "-04h.m4a", "./-04h.m4a"),
        (["push", "-don't.m4a"], "-don't.m4a", "'-don'\\''t.m4a'", "'./-don'\\''t.m4a'"),
    ])
    func refused(arguments: [String], word: String, quoted: String, dotted: String) {
        #expect(
            DashedName.message(for: arguments)
                == "'\(word)' is not an option; name a file that starts with '-' after -- (r2up \(arguments[0]) -- \(quoted)) or as \(dotted)")
    }

    @Test("commands that take keys are told about -- only: ./-x names another key")
    func keys() {
        for command in ["pull", "cat", "rm", "presign", "copy-url"] {
            #expect(
                DashedName.message(for: [command, "-take.m4a"])
                    == "'-take.m4a' is not an option; name a key or file that starts with '-' after -- (r2up \(command) -- -take.m4a)")
        }
    }

    @Test("numbers, sizes, durations, flag groups and words after -- pass", arguments: [
        ["push", "-v", "a.m4a"], ["push", "-hv"], ["history", "--limit", "-1"], ["sync", "--min-age", "-30s", "dir"], ["push", "--part-size", "-8MiB", "a"],
        ["push", "--", "-dash.wav"], ["push", "--key=-x.m4a", "a.m4a"], ["x", "-1"], ["x", "-1.5"], ["x", "-250ms"],
    ])
    func passes(arguments: [String]) {
        #expect(DashedName.message(for: arguments) == nil)
    }

    @Test("what is a number")
    func numbers() {
        #expect(DashedName.isNumber("1") && DashedName.isNumber("30s") && DashedName.isNumber("1.5") && DashedName.isNumber("250ms"))
        #expect(!DashedName.isNumber("04 leading") && !DashedName.isNumber("04.m4a") && !DashedName.isNumber("1.") && !DashedName.isNumber("m4"))
        #expect(!DashedName.isNumber("1abcd") && !DashedName.isNumber(""))
    }
}
