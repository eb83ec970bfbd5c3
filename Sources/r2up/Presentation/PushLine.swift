import Foundation
import R2UpKit

/// The line a folder push ends with, and what `push --dry-run` prints.
enum PushLine {
    /// "push: 12 uploaded (340 MB), 2 copied, 5 skipped (unchanged), 0 failed in 3.2 s"
    static func text(_ result: PushRunner.Summary, seconds: Double) -> String {
        let run = result.run
        let sent = run.completed.filter { $0.copiedFrom == nil }
        let copied = run.completed.count - sent.count
        let bytes = sent.reduce(Int64(0)) { $0 + $1.fileSize }
        var parts = [
            "\(SyncSummary.count(sent.count)) uploaded (\(ByteCount.string(bytes)))",
            "\(SyncSummary.count(copied)) copied",
            "\(SyncSummary.count(result.unchanged)) skipped (unchanged)",
            "\(SyncSummary.count(run.failed.count + result.notQueued)) failed",
        ]
        if run.leftResumable > 0 { parts.append("\(SyncSummary.count(run.leftResumable)) left to resume") }
        let tenths = (seconds * 10).rounded() / 10
        return "push: " + parts.joined(separator: ", ") + " in \(tenths) s"
    }

    /// `push --dry-run`: each file that would be uploaded, copied in the bucket, or skipped, then a total.
    static func preview(_ plan: PushPlan) -> [String] {
        var lines: [String] = []
        var bytes: Int64 = 0
        for request in plan.requests {
            let size = request.seen?.size ?? Self.size(of: request.path)
            bytes += size ?? 0
            let shown = size.map { " (\(ByteCount.string($0)))" } ?? ""
            lines.append("would upload \(TextColumns.printable(request.key))\(shown)")
        }
        for move in plan.moves {
            lines.append(
                "would copy \(TextColumns.printable(move.track.key)) to \(TextColumns.printable(move.upload.key)) "
                    + "(\(ByteCount.string(move.upload.file.size)), already in the bucket)")
        }
        for (_, key) in plan.unchanged { lines.append("would skip \(TextColumns.printable(key)) (uploaded, unchanged)") }
        lines.append(
            "push --dry-run: \(SyncSummary.count(plan.requests.count)) to upload (\(ByteCount.string(bytes))), "
                + "\(SyncSummary.count(plan.moves.count)) to copy, \(SyncSummary.count(plan.unchanged.count)) skipped (unchanged)")
        return lines
    }

    /// `push --json --dry-run`: the same plan as one JSON object (`PushPreview`).
    static func previewJSON(_ plan: PushPlan) -> PushPreview {
        var files: [PushPreview.File] = []
        for request in plan.requests {
            let size = request.seen?.size ?? Self.size(of: request.path)
            files.append(.init(action: "upload", path: request.path, key: request.key, from: nil, size: size))
        }
        for move in plan.moves {
            files.append(
                .init(action: "copy", path: move.upload.file.path, key: move.upload.key, from: move.track.key, size: move.upload.file.size))
        }
        for (path, key) in plan.unchanged { files.append(.init(action: "skip", path: path, key: key, from: nil, size: nil)) }
        let uploads = files.filter { $0.action == "upload" }
        return PushPreview(
            wouldUpload: uploads.count, wouldUploadBytes: uploads.reduce(Int64(0)) { $0 + ($1.size ?? 0) },
            wouldCopy: plan.moves.count, unchanged: plan.unchanged.count, files: files)
    }

    private static func size(of path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }
}

extension R2Up.Push {
    /// `--dry-run`: the plan, printed; nothing queued, nothing sent.
    func preview(_ request: PushRunner.Request, runner: PushRunner) throws {
        let plan: PushPlan
        do { plan = try runner.preview(request) } catch { throw CommandFailure(error.diagnosis) }
        var worst = FailureCategory.success
        for line in plan.nothingToPush where !global.quiet { Terminal.error(line) }
        for problem in plan.skipped {
            Terminal.error("r2up: \(problem.path): \(problem.message)")
            worst = max(worst, problem.category)
        }
        if json {
            Terminal.output(JSONOutput.encode(PushLine.previewJSON(plan)))
        } else {
            for line in PushLine.preview(plan) { Terminal.output(line) }
        }
        if worst != .success { throw CommandFailure(category: worst) }
    }
}

/// `push --json --dry-run`: what the push would do, sending nothing.
struct PushPreview: Codable {
    /// One file of the plan: `action` is "upload", "copy" (a moved track, copied in the
    /// bucket from `from`) or "skip" (uploaded and unchanged at `key`).
    struct File: Codable {
        var action: String
        var path: String
        var key: String
        var from: String?
        var size: Int64?
    }
    var dryRun = true
    var wouldUpload: Int
    var wouldUploadBytes: Int64
    var wouldCopy: Int
    var unchanged: Int
    var files: [File]
}
