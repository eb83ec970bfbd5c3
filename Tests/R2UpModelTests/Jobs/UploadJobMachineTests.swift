import Foundation
import Testing
@testable import R2UpModel

/// One event given to the machine in the transition table.
enum JobEvent: Sendable, CustomTestStringConvertible {
    case start(multipart: Bool), initiated(String), partFinished, bodySent, verified
    case failed(FailureKind), requeue, fileChanged, interrupted, resumeFailed

    static let all: [JobEvent] = [
        .start(multipart: true), .start(multipart: false), .initiated("U2"), .partFinished, .bodySent, .verified,
        .failed(.timeout), .failed(.httpStatus(403, code: "AccessDenied")), .failed(.cancelled),
        .failed(.httpStatus(404, code: "NoSuchUpload")), .requeue, .fileChanged, .interrupted, .resumeFailed,
    ]

    var name: UploadJobEvent {
        switch self {
        case .start: .start
        case .initiated: .initiated
        case .partFinished: .partFinished
        case .bodySent: .bodySent
        case .verified: .verified
        case .failed: .failed
        case .requeue: .requeue
        case .fileChanged: .fileChanged
        case .interrupted: .interrupted
        case .resumeFailed: .resumeFailed
        }
    }

    var testDescription: String { "\(self)" }

    func send(to machine: inout UploadJobMachine, now: Date) -> Answer {
        switch self {
        case .start(let multipart): .action(machine.start(multipart: multipart))
        case .initiated(let id): .transition(machine.initiated(uploadID: id))
        case .partFinished: .transition(machine.partFinished())
        case .bodySent: .transition(machine.bodySent())
        case .verified: .transition(machine.verified())
        case .failed(let kind): .action(machine.failed(kind, now: now))
        case .requeue: .action(machine.requeue())
        case .fileChanged: .action(machine.fileChanged())
        case .interrupted: .action(machine.interrupted())
        case .resumeFailed: .transition(machine.resumeFailed())
        }
    }

    /// The refusal of this event in `state`, in the shape its answer takes.
    func rejected(in state: UploadJobState) -> Answer {
        switch self {
        case .initiated, .partFinished, .bodySent, .verified, .resumeFailed: .transition(.rejected(state: state, event: name))
        case .start, .failed, .requeue, .fileChanged, .interrupted: .action(.rejected(state: state, event: name))
        }
    }
}

/// What the machine answered: an action for the driver, or the state a transition entered.
enum Answer: Sendable, Equatable {
    case action(UploadJobAction)
    case transition(UploadJobTransition)
}

/// A state (with or without a multipart upload id) the table starts from.
struct JobStart: Sendable, Hashable, CustomTestStringConvertible {
    var state: UploadJobState
    var uploadID: String?
    var testDescription: String { uploadID.map { "\(state)(\($0))" } ?? "\(state)" }

    static let all: [JobStart] = [
        .init(state: .staged), .init(state: .initiated, uploadID: "U1"), .init(state: .uploading),
        .init(state: .uploading, uploadID: "U1"), .init(state: .verifying), .init(state: .verifying, uploadID: "U1"),
        .init(state: .completed), .init(state: .failedRetryable), .init(state: .failedRetryable, uploadID: "U1"),
        .init(state: .failedPermanent),
    ]
}

/// What an accepted transition leads to; nil in the table means rejected, nothing changed.
struct Outcome: Sendable {
    var answer: Answer
    var state: UploadJobState
    var uploadID: String?

    init(action: UploadJobAction, state: UploadJobState, uploadID: String? = nil) {
        self.init(answer: .action(action), state: state, uploadID: uploadID)
    }

    /// An accepted transition: the answer names the state the machine is now in.
    init(entered state: UploadJobState, uploadID: String? = nil) {
        self.init(answer: .transition(.entered(state)), state: state, uploadID: uploadID)
    }

    init(answer: Answer, state: UploadJobState, uploadID: String?) {
        self.answer = answer
        self.state = state
        self.uploadID = uploadID
    }
}

@Suite("The upload job state machine")
struct UploadJobMachineTests {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static let policy = JobRetryPolicy(
        maxInProcessAttempts: 3, base: .seconds(1), cap: .seconds(30), nextRunBase: .seconds(60),
        nextRunCap: .seconds(3600), random: { 0.5 })
    static let retry = UploadJobAction.retry(after: .milliseconds(500))

    /// Every state × every event. Columns: start(mp) start(single) initiated partFinished
    /// bodySent verified failed(timeout) failed(AccessDenied) failed(cancelled)
    /// failed(NoSuchUpload) requeue fileChanged, then `extra`'s columns.
    static let table: [JobStart: [Outcome?]] = base.merging(extra) { $0 + $1 }

    /// Columns interrupted (a run stopped or died), resumeFailed (a resume found nothing to build on).
    static let extra: [JobStart: [Outcome?]] = [
        JobStart(state: .staged): [Outcome(action: .suspend, state: .staged), nil],
        JobStart(state: .initiated, uploadID: "U1"): [Outcome(action: .suspend, state: .initiated, uploadID: "U1"), nil],
        JobStart(state: .uploading): [Outcome(action: .suspend, state: .staged), nil],
        JobStart(state: .uploading, uploadID: "U1"): [
            Outcome(action: .suspend, state: .initiated, uploadID: "U1"),
            Outcome(entered: .staged),
        ],
        JobStart(state: .verifying): [Outcome(action: .suspend, state: .staged), nil],
        JobStart(state: .verifying, uploadID: "U1"): [Outcome(action: .suspend, state: .initiated, uploadID: "U1"), nil],
        JobStart(state: .completed): [nil, nil],
        JobStart(state: .failedRetryable): [nil, nil],
        JobStart(state: .failedRetryable, uploadID: "U1"): [nil, nil],
        JobStart(state: .failedPermanent): [nil, nil],
    ]

    static let base: [JobStart: [Outcome?]] = [
        JobStart(state: .staged): [
            Outcome(action: .createMultipartUpload, state: .staged), Outcome(action: .putObject, state: .uploading),
            Outcome(entered: .initiated, uploadID: "U2"),
            nil, nil, nil,
            Outcome(action: retry, state: .failedRetryable),
            Outcome(action: .failPermanently(abortUploadID: nil), state: .failedPermanent),
            Outcome(action: .suspend, state: .staged),
            Outcome(action: .failPermanently(abortUploadID: nil), state: .failedPermanent),
            nil, Outcome(action: .restage(abortUploadID: nil), state: .staged),
        ],
        JobStart(state: .initiated, uploadID: "U1"): [
            Outcome(action: .uploadParts(uploadID: "U1", listParts: true), state: .uploading, uploadID: "U1"),
            nil, nil,
            Outcome(entered: .uploading, uploadID: "U1"),
            nil, nil,
            Outcome(action: retry, state: .failedRetryable, uploadID: "U1"),
            Outcome(action: .failPermanently(abortUploadID: "U1"), state: .failedPermanent),
            Outcome(action: .suspend, state: .initiated, uploadID: "U1"),
            Outcome(action: .restage(abortUploadID: nil), state: .staged),
            nil, Outcome(action: .restage(abortUploadID: "U1"), state: .staged),
        ],
        JobStart(state: .uploading): [
            nil, nil, nil, nil,
            Outcome(entered: .verifying),
            nil,
            Outcome(action: retry, state: .failedRetryable),
            Outcome(action: .failPermanently(abortUploadID: nil), state: .failedPermanent),
            Outcome(action: .suspend, state: .staged),
            Outcome(action: .failPermanently(abortUploadID: nil), state: .failedPermanent),
            nil, Outcome(action: .restage(abortUploadID: nil), state: .staged),
        ],
        JobStart(state: .uploading, uploadID: "U1"): [
            nil, nil, nil,
            Outcome(entered: .uploading, uploadID: "U1"),
            Outcome(entered: .verifying, uploadID: "U1"),
            nil,
            Outcome(action: retry, state: .failedRetryable, uploadID: "U1"),
            Outcome(action: .failPermanently(abortUploadID: "U1"), state: .failedPermanent),
            Outcome(action: .suspend, state: .initiated, uploadID: "U1"),
            Outcome(action: .restage(abortUploadID: nil), state: .staged),
            nil, Outcome(action: .restage(abortUploadID: "U1"), state: .staged),
        ],
        JobStart(state: .verifying): [
            // bodySent: a single PUT sent again after its check found the stored object wrong.
            nil, nil, nil, nil, Outcome(entered: .verifying),
            Outcome(entered: .completed),
            Outcome(action: retry, state: .failedRetryable),
            Outcome(action: .failPermanently(abortUploadID: nil), state: .failedPermanent),
            Outcome(action: .suspend, state: .staged),
            Outcome(action: .failPermanently(abortUploadID: nil), state: .failedPermanent),
            nil, Outcome(action: .restage(abortUploadID: nil), state: .staged),
        ],
        JobStart(state: .verifying, uploadID: "U1"): [
            nil, nil, nil, nil, nil,
            Outcome(entered: .completed, uploadID: "U1"),
            Outcome(action: retry, state: .failedRetryable, uploadID: "U1"),
            Outcome(action: .failPermanently(abortUploadID: "U1"), state: .failedPermanent),
            Outcome(action: .suspend, state: .initiated, uploadID: "U1"),
            Outcome(action: .restage(abortUploadID: nil), state: .staged),
            nil, Outcome(action: .restage(abortUploadID: "U1"), state: .staged),
        ],
        JobStart(state: .completed): Array(repeating: nil, count: 12),
        JobStart(state: .failedRetryable): [
            Outcome(action: .createMultipartUpload, state: .staged), Outcome(action: .putObject, state: .uploading),
            nil, nil, nil, nil, nil, nil, nil, nil,
            Outcome(action: .requeued, state: .staged),
            Outcome(action: .restage(abortUploadID: nil), state: .staged),
        ],
        JobStart(state: .failedRetryable, uploadID: "U1"): [
            Outcome(action: .uploadParts(uploadID: "U1", listParts: true), state: .uploading, uploadID: "U1"),
            nil, nil, nil, nil, nil, nil, nil, nil, nil,
            Outcome(action: .requeued, state: .initiated, uploadID: "U1"),
            Outcome(action: .restage(abortUploadID: "U1"), state: .staged),
        ],
        JobStart(state: .failedPermanent): Array(repeating: nil, count: 10) + [
            Outcome(action: .requeued, state: .staged), Outcome(action: .restage(abortUploadID: nil), state: .staged),
        ],
    ]

    static let cases: [(JobStart, Int)] = JobStart.all.flatMap { start in JobEvent.all.indices.map { (start, $0) } }

    @Test("the table covers every state and every event")
    func tableIsComplete() {
        #expect(Set(JobStart.all.map(\.state)) == Set(UploadJobState.allCases))
        #expect(Set(JobEvent.all.map(\.name)) == Set(UploadJobEvent.allCases))
        for start in JobStart.all { #expect(Self.table[start]?.count == JobEvent.all.count, "\(start)") }
    }

    @Test("every transition (state × event)", arguments: cases)
    func transition(start: JobStart, eventIndex: Int) throws {
        let event = JobEvent.all[eventIndex]
        let expected = try #require(Self.table[start])[eventIndex]
        var machine = UploadJobMachine(state: start.state, uploadID: start.uploadID, attempts: 0, policy: Self.policy)
        let answer = event.send(to: &machine, now: Self.now)
        guard let expected else {
            #expect(answer == event.rejected(in: start.state), "\(start) + \(event)")
            #expect(machine.state == start.state)
            #expect(machine.uploadID == start.uploadID)
            return
        }
        #expect(answer == expected.answer, "\(start) + \(event)")
        #expect(machine.state == expected.state, "\(start) + \(event)")
        #expect(machine.uploadID == expected.uploadID, "\(start) + \(event)")
        if expected.answer == .action(Self.retry) {
            #expect(machine.attempts == 1)
            #expect(machine.nextAttemptAt == Self.now.addingTimeInterval(0.5))
        }
    }
}
