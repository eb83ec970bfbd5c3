import Foundation
import R2UpKit

/// The line an Offload leaves on the page: what was freed, and each track kept with why.
enum OffloadNotice {
    static func text(_ summary: OffloadSummary) -> String {
        let freed = summary.freed.count
        var text = "Offloaded \(freed) track\(freed == 1 ? "" : "s") (\(Html.size(summary.freedBytes)) freed)."
        let kept = summary.kept.filter { $0.kept?.isFailure ?? false }
        if !kept.isEmpty {
            let named = kept.prefix(3).map { "\(($0.path as NSString).lastPathComponent): \($0.kept.map(reason) ?? "")" }
            text += " Kept \(kept.count): " + named.joined(separator: "; ") + (kept.count > 3 ? "; …" : "") + "."
        }
        return text
    }

    static func reason(_ reason: OffloadReason) -> String {
        switch reason {
        case .changedSinceUpload, .contentChanged: "changed since its upload"
        case .objectMissing, .objectReplaced: "its cloud copy is missing or not the one uploaded"
        case .folderNotWritable: "its folder is read-only"
        case .otherBucket: "its cloud copy is in another bucket"
        case .server(let diagnosis): diagnosis.message
        case .notChecked: "not checked (the run stopped)"
        default: "its copies could not be checked"
        }
    }
}
