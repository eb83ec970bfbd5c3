internal import CCurl

/// libcurl's process-wide setup. `curl_global_init` is not thread-safe, so it runs
/// exactly once, through a lazy global (Swift runs those under a once-guard).
enum CurlRuntime {
    static let initialized: Bool = {
        curl_global_init(r2_global_default) == CURLE_OK
    }()
}
