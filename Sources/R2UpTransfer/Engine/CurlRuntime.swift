internal import CCurl
import Foundation

/// libcurl's process-wide setup. `curl_global_init` is not thread-safe, so it runs
/// exactly once, through a lazy global (Swift runs those under a once-guard).
enum CurlRuntime {
    static let initialized: Bool = {
        curl_global_init(r2_global_default) == CURLE_OK
    }()

    /// The CA file libcurl verifies with when none is configured, where it is a readable file.
    /// Passing it on with no CA directory lets curl (7.87+) parse it once and share the store
    /// between connections; with Debian's default directory beside it, every new connection
    /// parsed the whole bundle again (~28 ms of CPU and ~0.85 MB each: 256 at once took 277 MB).
    static let builtInCAFile: String? = {
        var buffer = [CChar](repeating: 0, count: 4_096)
        // curl_easy_init would run the global setup itself, unguarded, if it had not run yet.
        guard initialized, r2_builtin_ca_file(&buffer, buffer.count) != 0 else { return nil }
        let path = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return FileManager.default.isReadableFile(atPath: path) ? path : nil
    }()
}
