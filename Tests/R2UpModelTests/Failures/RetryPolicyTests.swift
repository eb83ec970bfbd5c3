import Foundation
import Testing
@testable import R2UpModel

@Suite("Backoff and retry classification")
struct RetryPolicyTests {
    static let backoffs: [(Int, Duration, Duration, Double, Duration)] = [
        (1, Duration.seconds(1), Duration.seconds(30), 1.0, Duration.seconds(1)),
        (1, .seconds(1), .seconds(30), 0.5, .milliseconds(500)),
        (2, .seconds(1), .seconds(30), 1.0, .seconds(2)),
        (3, .seconds(1), .seconds(30), 0.25, .seconds(1)),
        (5, .seconds(1), .seconds(30), 1.0, .seconds(16)),
        (6, .seconds(1), .seconds(30), 1.0, .seconds(30)),
        (6, .seconds(1), .seconds(30), 0.5, .seconds(15)),
        (1000, .seconds(1), .seconds(30), 0.5, .seconds(15)),
        (4, .milliseconds(500), .seconds(30), 0.5, .seconds(2)),
        (3, .seconds(1), .seconds(30), 0.0, .zero),
        (0, .seconds(1), .seconds(30), 1.0, .seconds(1)),
        (2, .seconds(1), .seconds(30), 7.0, .seconds(2)),
        (2, .seconds(1), .seconds(30), -1.0, .zero),
    ]

    @Test(
        "full jitter: random × min(cap, base × 2^(attempt−1))",
        arguments: backoffs)
    func backoff(attempt: Int, base: Duration, cap: Duration, random: Double, delay: Duration) {
        #expect(Backoff.delay(attempt: attempt, base: base, cap: cap, random: random) == delay)
    }

    static let policy = JobRetryPolicy(
        maxInProcessAttempts: 3, base: .seconds(1), cap: .seconds(30), nextRunBase: .seconds(60),
        nextRunCap: .seconds(3600), maxBadDigestAttempts: 3, signatureMismatchRetries: 1, random: { 0.5 })

    static let classes: [(FailureKind, RetryClass)] = [
        (FailureKind.connectionRefused, RetryClass.retryable),
        (.connectionReset, .retryable),
        (.timeout, .retryable),
        (.httpStatus(500, code: ""), .retryable),
        (.httpStatus(502, code: ""), .retryable),
        (.httpStatus(503, code: ""), .retryable),
        (.httpStatus(504, code: ""), .retryable),
        (.httpStatus(429, code: ""), .retryable),
        (.httpStatus(429, code: "TooManyRequests"), .retryable),
        (.httpStatus(503, code: "SlowDown"), .retryable),
        (.httpStatus(400, code: "RequestTimeout"), .retryable),
        (.httpStatus(403, code: "RequestTimeTooSkewed"), .retryable),
        (.httpStatus(500, code: "InternalError"), .retryable),
        (.httpStatus(503, code: "ServiceUnavailable"), .retryable),
        (.httpStatus(400, code: "BadDigest"), .retryable),
        (.httpStatus(403, code: "AccessDenied"), .permanent),
        (.httpStatus(403, code: "InvalidAccessKeyId"), .permanent),
        (.httpStatus(403, code: "SignatureDoesNotMatch"), .permanent),
        (.httpStatus(404, code: "NoSuchBucket"), .permanent),
        (.httpStatus(400, code: "EntityTooLarge"), .permanent),
        (.httpStatus(400, code: "InvalidArgument"), .permanent),
        (.httpStatus(404, code: "NoSuchUpload"), .permanent),
        (.httpStatus(400, code: ""), .permanent),
        (.fileVanished, .permanent),
        (.fileUnreadable, .permanent),
    ]

    @Test(
        "what may be retried",
        arguments: classes)
    func classification(kind: FailureKind, expected: RetryClass) {
        #expect(Self.policy.classify(kind, streak: 1, duringUploadPart: false) == expected)
    }

    static let streakRows: [(FailureKind, Int, Bool, RetryClass)] = [
        (FailureKind.httpStatus(400, code: "BadDigest"), 1, false, RetryClass.retryable),
        (.httpStatus(400, code: "BadDigest"), 2, true, .retryable),
        (.httpStatus(400, code: "BadDigest"), 3, false, .permanent),
        (.httpStatus(403, code: "SignatureDoesNotMatch"), 1, true, .retryable),
        (.httpStatus(403, code: "SignatureDoesNotMatch"), 2, true, .permanent),
        (.httpStatus(403, code: "SignatureDoesNotMatch"), 1, false, .permanent),
    ]

    @Test(
        "BadDigest retries a few times in a row; SignatureDoesNotMatch retries once, on parts only",
        arguments: streakRows)
    func streaks(kind: FailureKind, streak: Int, duringUploadPart: Bool, expected: RetryClass) {
        #expect(Self.policy.classify(kind, streak: streak, duringUploadPart: duringUploadPart) == expected)
    }

    @Test("signature retries on parts can be turned off")
    func signatureRetriesOff() {
        var policy = Self.policy
        policy.signatureMismatchRetries = 0
        #expect(policy.classify(.httpStatus(403, code: "SignatureDoesNotMatch"), streak: 1, duringUploadPart: true) == .permanent)
    }

    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static let decisionRows: [(FailureKind, Int, Int, RetryDecision)] = [
        // (kind, attempts over all runs, attempts this run, decision) with random 0.5: in the run
        // 0.5 × the ceiling, until a later run 0.75 × (half the ceiling at least)
        (FailureKind.timeout, 1, 1, RetryDecision.retry(after: .milliseconds(500))),
        (.timeout, 2, 2, .retry(after: .seconds(1))),
        (.timeout, 3, 3, .giveUp(nextAttemptAt: now.addingTimeInterval(180))),
        (.timeout, 4, 3, .giveUp(nextAttemptAt: now.addingTimeInterval(360))),
        (.timeout, 20, 3, .giveUp(nextAttemptAt: now.addingTimeInterval(2700))),
        (.httpStatus(503, code: "SlowDown"), 1, 1, .retry(after: .milliseconds(500))),
        (.httpStatus(403, code: "AccessDenied"), 1, 1, .permanent),
        (.fileVanished, 1, 1, .permanent),
        // The request was tried again already: a reply not like S3's that persists is the endpoint's.
        (.malformedReply("no ETag"), 1, 1, .permanent),
    ]

    @Test(
        "retry in this run with backoff, then leave the rest to a later run",
        arguments: decisionRows)
    func decisions(kind: FailureKind, attempts: Int, attemptsThisRun: Int, decision: RetryDecision) {
        let made = Self.policy.decide(
            kind, streak: 1, attempts: attempts, attemptsThisRun: attemptsThisRun, duringUploadPart: false, now: Self.now)
        #expect(made == decision)
    }

    @Test("one reply not like S3's is tried again, at most 3 times in all; a BadDigest likewise")
    func malformedReplyRetried() {
        let requests = RequestRetryPolicy(random: { 0.5 })
        #expect(FailureKind.malformedReply("no ETag").retryClass == .retryable)
        #expect(requests.delayBeforeRetry(.malformedReply("no ETag"), attempt: 1) == .milliseconds(100))
        #expect(requests.delayBeforeRetry(.malformedReply("no ETag"), attempt: 2) == .milliseconds(200))
        #expect(requests.delayBeforeRetry(.malformedReply("no ETag"), attempt: 3) == nil)
        #expect(requests.delayBeforeRetry(.httpStatus(400, code: "BadDigest"), attempt: 3) == nil)
    }
}
