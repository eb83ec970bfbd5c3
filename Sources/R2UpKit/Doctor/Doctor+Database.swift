import Foundation
import R2UpModel
import R2UpStore
import R2UpTransfer

/// The local check: the database.
extension Doctor {
    /// Opens the database (upgrading it as every command does) and names its schema; a
    /// database not made yet is fine when its folder can be made and written.
    func databaseCheck(_ path: String) -> DoctorCheck {
        guard FileManager.default.fileExists(atPath: path) else {
            var folder = (path as NSString).deletingLastPathComponent
            while !folder.isEmpty && folder != "/" && !FileManager.default.fileExists(atPath: folder) {
                folder = (folder as NSString).deletingLastPathComponent
            }
            if folder.isEmpty { folder = "." }
            guard access(folder, W_OK | X_OK) == 0 else {
                return .fail(
                    .database, "\(path) does not exist and \(folder) cannot be written",
                    "use \(OptionName.database.sources) for a writable place")
            }
            return .pass(.database, "\(path) is not created yet; the first upload creates it")
        }
        do {
            let store = try Store(path: path)
            let migrations = try store.appliedMigrations()
            let uploads = try store.uploadCount()
            return .pass(
                .database,
                "\(path) opens, schema \(migrations.last ?? "none") (\(migrations.count) migrations), \(uploads) upload\(uploads == 1 ? "" : "s") in history"
            )
        } catch {
            return .fail(.database, error.description, "use \(OptionName.database.option) for another file, or move this one away")
        }
    }
}
