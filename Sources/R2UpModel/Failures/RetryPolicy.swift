public import Foundation

// The retry rules, all of them: backoff, how one request is retried, how a job is retried
// across tries and runs. Which failures are worth a retry at all is FailureKind.retryClass
// (FailureTaxonomy.swift).

/// Exponential backoff with full jitter, as a pure function of its inputs.
///
/// The wait before retry number `attempt` (1 after the first failure) is
/// `random × min(cap, base × 2^(attempt−1))`, the "full jitter" that keeps many
/// clients from retrying in step.
public enum Backoff {
    /// The longest wait allowed before retry number `attempt`.
    public static func ceiling(attempt: Int, base: Duration, cap: Duration) -> Duration {
        // In Double seconds so a large attempt count cannot overflow; it just meets the cap.
        let grown = base.timeInterval * pow(2, Double(max(attempt, 1) - 1))
        return .seconds(min(grown, cap.timeInterval))
    }

    /// The wait before retry number `attempt`.
    /// - Parameters:
    ///   - attempt: 1 after the first failure, 2 after the second, …
    ///   - base: the ceiling of the first wait.
    ///   - cap: no wait is longer.
    ///   - random: a number in [0, 1] from the caller's random source (clamped).
    public static func delay(attempt: Int, base: Duration, cap: Duration, random: Double) -> Duration {
        let unit = random.isNaN ? 0 : min(max(random, 0), 1)
        return .seconds(ceiling(attempt: attempt, base: base, cap: cap).timeInterval * unit)
    }
}

extension Duration {
    /// The duration in seconds, for date arithmetic.
    var timeInterval: TimeInterval {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// How one request (a PUT, a part) is retried inside an upload: quick tries with `Backoff`.
/// Job-level retries across runs are `JobRetryPolicy`'s.
public struct RequestRetryPolicy: Sendable {
    public var base: Duration
    public var cap: Duration
    /// BadDigest means the bytes arrived damaged; a few resends, then it is treated as permanent.
    public var maxBadDigestAttempts: Int
    /// A reply that is not what S3 sends is tried this many times in all: one damaged reply is
    /// retried, an endpoint that always answers so (not S3) fails the run soon after.
    public var maxMalformedReplyAttempts: Int
    /// Returns a value in [0, 1); injected so tests can pin the jitter.
    public var random: @Sendable () -> Double

    public init(
        base: Duration = .milliseconds(200), cap: Duration = .seconds(20), maxBadDigestAttempts: Int = 3,
        maxMalformedReplyAttempts: Int = 3, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.base = base
        self.cap = cap
        self.maxBadDigestAttempts = maxBadDigestAttempts
        self.maxMalformedReplyAttempts = maxMalformedReplyAttempts
        self.random = random
    }

    /// The wait before trying again after `attempt` failures of `kind`, or nil to give up now.
    public func delayBeforeRetry(_ kind: FailureKind, attempt: Int) -> Duration? {
        guard kind.retryClass == .retryable else { return nil }
        if case .httpStatus(_, "BadDigest") = kind, attempt >= maxBadDigestAttempts { return nil }
        if case .malformedReply = kind, attempt >= maxMalformedReplyAttempts { return nil }
        if kind == .fileChanged { return nil }  // handled by the caller: the job goes back to staged
        let delay = Backoff.delay(attempt: attempt, base: base, cap: cap, random: random())
        // R2 takes about one write a second per key: a retry sooner meets the same 429.
        if case .httpStatus(429, _) = kind { return max(delay, .seconds(1)) }
        return delay
    }
}

/// What to do about one failure of a job.
public enum RetryDecision: Sendable, Equatable {
    /// Try again in this run after the delay.
    case retry(after: Duration)
    /// Stop trying in this run; the next run may try from the given time.
    case giveUp(nextAttemptAt: Date)
    /// Trying again cannot help; wait for a person (`r2up retry`).
    case permanent
}

/// How a job's failures are retried: a few tries with backoff in this run, then a later run.
///
/// It builds on `FailureKind.retryClass` (network trouble, 5xx, 429 and the throttling
/// codes retry; auth errors, a missing bucket and bad input do not) and adds what needs
/// the job's history: BadDigest retries a few times in a row then counts as permanent
/// (DESIGN §5), and SignatureDoesNotMatch on an UploadPart retries once with a fresh
/// signature (PEERS §3 item 14: R2 returns it spuriously on parts).
public struct JobRetryPolicy: Sendable {
    /// Tries in one run, the first included, before the rest is left to a later run.
    public var maxInProcessAttempts: Int
    /// Ceiling of the first in-run wait.
    public var base: Duration
    /// No in-run wait is longer.
    public var cap: Duration
    /// Ceiling of the first wait between runs (what `nextAttemptAt` is set from); a wait between
    /// runs is at least half its ceiling.
    public var nextRunBase: Duration
    /// No wait between runs is longer.
    public var nextRunCap: Duration
    /// BadDigest this many times in a row makes the failure permanent.
    public var maxBadDigestAttempts: Int
    /// Retries of SignatureDoesNotMatch during an UploadPart; 0 treats it as permanent at once.
    public var signatureMismatchRetries: Int
    /// A number in [0, 1); injected so tests can pin the jitter.
    public var random: @Sendable () -> Double
    /// Whether a write whose checking HEAD kept failing (`FailureKind.unconfirmed`) is tried
    /// again: by a daemon (`watch`), which nobody watches to run `r2up retry`; the try finds the
    /// object at the key and takes it when it is the file's.
    public var retriesUnconfirmed = false

    /// - Parameters:
    ///   - maxInProcessAttempts: tries in one run before giving up until `nextAttemptAt`.
    ///   - base: ceiling of the first in-run wait.
    ///   - cap: longest in-run wait.
    ///   - nextRunBase: ceiling of the first wait until a later run.
    ///   - nextRunCap: longest wait until a later run.
    ///   - maxBadDigestAttempts: BadDigest in a row before it is permanent.
    ///   - signatureMismatchRetries: retries of SignatureDoesNotMatch on an UploadPart.
    ///   - random: the jitter source, a number in [0, 1).
    public init(
        maxInProcessAttempts: Int = 4,
        base: Duration = .milliseconds(500),
        cap: Duration = .seconds(30),
        nextRunBase: Duration = .seconds(60),
        nextRunCap: Duration = .seconds(6 * 3600),
        maxBadDigestAttempts: Int = 3,
        signatureMismatchRetries: Int = 1,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maxInProcessAttempts = maxInProcessAttempts
        self.base = base
        self.cap = cap
        self.nextRunBase = nextRunBase
        self.nextRunCap = nextRunCap
        self.maxBadDigestAttempts = maxBadDigestAttempts
        self.signatureMismatchRetries = signatureMismatchRetries
        self.random = random
    }

    /// Whether another try can help.
    /// - Parameters:
    ///   - kind: the failure.
    ///   - streak: how many times in a row this same failure happened, this one included.
    ///   - duringUploadPart: whether it answered an UploadPart request.
    public func classify(_ kind: FailureKind, streak: Int, duringUploadPart: Bool) -> RetryClass {
        switch kind {
        case .httpStatus(_, "BadDigest"):
            return streak < maxBadDigestAttempts ? .retryable : .permanent
        case .httpStatus(_, "SignatureDoesNotMatch") where duringUploadPart:
            return streak <= signatureMismatchRetries ? .retryable : .permanent
        case .malformedReply:
            return .permanent  // the request was tried again already (`RequestRetryPolicy`)
        case .unconfirmed:
            return retriesUnconfirmed ? .retryable : .permanent
        default:
            return kind.retryClass
        }
    }

    /// Retry now, later, or never.
    /// - Parameters:
    ///   - kind: the failure.
    ///   - streak: this same failure in a row, this one included.
    ///   - attempts: the job's failed tries over all runs since it was queued, this one included.
    ///   - attemptsThisRun: failed tries in this run since the job last made progress, this one included.
    ///   - duringUploadPart: whether it answered an UploadPart request.
    ///   - now: the current time, for `nextAttemptAt`.
    public func decide(
        _ kind: FailureKind, streak: Int, attempts: Int, attemptsThisRun: Int, duringUploadPart: Bool, now: Date
    ) -> RetryDecision {
        guard classify(kind, streak: streak, duringUploadPart: duringUploadPart) == .retryable else {
            return .permanent
        }
        if attemptsThisRun < maxInProcessAttempts {
            return .retry(after: Backoff.delay(attempt: attemptsThisRun, base: base, cap: cap, random: random()))
        }
        // Half the ceiling at least ("equal jitter"): with full jitter a wait could come out near
        // zero, and the next cron run would send a job that just gave up straight back.
        let wait = Backoff.delay(attempt: attempts, base: nextRunBase, cap: nextRunCap, random: 0.5 + random() / 2)
        return .giveUp(nextAttemptAt: now.addingTimeInterval(wait.timeInterval))
    }
}
