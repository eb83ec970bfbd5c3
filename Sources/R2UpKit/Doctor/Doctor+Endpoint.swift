import Foundation
import R2UpModel
import R2UpStore
import R2UpTransfer

/// The endpoint, TLS and clock checks: one unsigned HEAD of the endpoint.
extension Doctor {
    struct Probe {
        var endpoint: DoctorCheck
        var tls: DoctorCheck
        var clock: DoctorCheck?
    }

    /// One unsigned HEAD of the endpoint's root: any HTTP status shows it is reachable (and,
    /// over https, that curl verified its certificate); its `Date` header gives the clock.
    func probeEndpoint(_ endpoint: S3Endpoint, engine: TransferEngine) async -> Probe {
        let url = "\(endpoint.scheme)://\(endpoint.authority(bucket: nil))\(endpoint.path(bucket: nil, key: nil))"
        let shown = "\(endpoint.scheme)://\(endpoint.authority(bucket: nil))"
        let plain = endpoint.scheme == "http"
        let started = ContinuousClock.now
        do {
            let response = try await engine.perform(HTTPRequest(method: "HEAD", url: url))
            let elapsed = ContinuousClock.now - started
            let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            let endpointCheck = DoctorCheck.pass(
                .endpoint, "\(shown) answered (HTTP \(response.status)) in \(milliseconds) ms")
            let tls: DoctorCheck =
                plain
                ? DoctorCheck(.tls, .skipped, "plain HTTP, nothing is encrypted")
                : .pass(.tls, "the certificate of \(endpoint.host) is valid and trusted")
            return Probe(endpoint: endpointCheck, tls: tls, clock: clockCheck(response))
        } catch let error as TransferError {
            switch error.kind {
            case .tlsFailure:
                return Probe(
                    endpoint: .pass(.endpoint, "\(shown) accepted the connection"),
                    tls: .fail(
                        .tls, "the TLS handshake failed: \(error.message)",
                        "for a private CA pass \(OptionName.caBundle.option) (or \(OptionName.caBundle.variable)); check the system clock"))
            case .connectionRefused:
                return unreachable(shown, "refused the connection", "check the endpoint URL and that the server is running")
            case .dnsFailure:
                return unreachable(shown, "cannot be resolved (\(error.message))", "check the endpoint's host name")
            case .timeout:
                return unreachable(
                    shown, "did not answer within \(connectTimeoutSeconds) s",
                    "check the endpoint URL, the network and any firewall or proxy")
            default:
                return unreachable(shown, "cannot be reached: \(error.message)", "check the endpoint URL and the network")
            }
        } catch {
            return unreachable(shown, "cannot be reached: \(error)", "check the endpoint URL and the network")
        }
    }

    private func unreachable(_ endpoint: String, _ problem: String, _ advice: String) -> Probe {
        Probe(
            endpoint: .fail(.endpoint, "\(endpoint) is unreachable: it \(problem)", advice),
            tls: .skipped(.tls, because: .endpoint))
    }

    /// The server's clock against ours, from a reply's `Date` header.
    func clockCheck(_ response: HTTPResponse) -> DoctorCheck {
        guard let text = response.header("date"), let server = HTTPDate.parse(text) else {
            return .warning(.clock, "the server sent no Date header, so the clock cannot be compared", nil)
        }
        return Self.clockCheck(offset: server.timeIntervalSince(response.receivedAt))
    }

    /// `offset` is the server's time minus ours, in seconds. HTTP dates have whole seconds,
    /// so an offset within one second is reported as 0.
    static func clockCheck(offset: TimeInterval) -> DoctorCheck {
        let seconds = abs(offset) < 1 ? 0 : Int(offset.rounded())
        let signed = seconds > 0 ? "+\(seconds)" : "\(seconds)"
        if abs(offset) > skewWarningSeconds {
            let direction = seconds > 0 ? "behind" : "ahead of"
            return .warning(
                .clock, "this clock is \(abs(seconds)) s \(direction) the server's (offset \(signed) s)",
                "r2up corrects for it, but other tools will fail: synchronise the clock (NTP)")
        }
        return .pass(.clock, "offset \(signed) s from the server's Date header")
    }
}
