package import Foundation
package import R2UpModel
package import R2UpStore

/// Jobs named on a command line (`r2up retry`, `r2up queue cancel`): full ids or their
/// first characters, as `r2up queue` prints them.
package enum JobSelection {
    /// The ids of the jobs among `candidates` that `texts` name, each exactly one.
    /// - Parameters:
    ///   - texts: full job ids or their first characters, as given.
    ///   - candidates: the jobs the texts may name.
    ///   - what: how the candidates are described in a message ("failed upload").
    /// - Returns: the chosen jobs' ids, in the order of `texts`.
    package static func match(_ texts: [String], in candidates: [UploadJob], what: String) throws(SelectionError) -> [UUID] {
        var chosen: [UUID] = []
        for text in texts {
            let needle = text.lowercased()
            let matches = candidates.filter { $0.id.uuidString.lowercased().hasPrefix(needle) }
            guard !needle.isEmpty, matches.count == 1 else {
                throw SelectionError(text: text, matches: needle.isEmpty ? 0 : matches.count, what: what)
            }
            if !chosen.contains(matches[0].id) { chosen.append(matches[0].id) }
        }
        return chosen
    }
}

/// An id that names no job, or more than one.
package struct SelectionError: Error, Sendable, Equatable, CustomStringConvertible {
    package var text: String
    package var matches: Int
    package var what: String

    package var description: String {
        matches == 0
            ? "no \(what) has the id '\(text)'; \(Remedy.seeQueue)"
            : "the id '\(text)' matches \(matches) \(what)s; give more of it"
    }

    package var diagnosis: Diagnosis { Diagnosis(category: .badInput, message: description) }
}
