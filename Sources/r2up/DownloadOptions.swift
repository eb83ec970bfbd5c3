import ArgumentParser
import R2UpKit

/// The transfer flags `pull` and `fetch` share: how deep to go and how fast.
struct DownloadOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: "Requests in flight at once, parts included (1-512; fewer where 64 MiB of memory holds fewer); default: found as the run goes, from the link and the server's replies.")
    var concurrency: ConcurrencyValue?

    @Option(parsing: .unconditional, help: "Total download rate limit, e.g. 500K, 10M (bytes a second).")
    var bwlimit: String?

    func validate() throws {
        try concurrency?.check()
        if let bwlimit, ByteSize.parse(bwlimit).map({ $0 > 0 }) != true {
            throw ValidationError("--bwlimit '\(bwlimit)' is not a rate like 500K or 10M")
        }
    }

    /// The run's options from the flags (checked by `validate()`).
    var runOptions: RunOptions {
        var options = RunOptions.forTransfers()
        options.concurrency = concurrency?.depth
        options.bandwidthLimit = bwlimit.flatMap(ByteSize.parse)
        return options
    }
}
