import ArgumentParser
import Foundation
import Synchronization
import R2UpKit
import R2UpModel
import R2UpStore
import R2UpTransfer

extension R2Up {
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload files (or a folder's tracks) and print their public URLs.",
            discussion: """
                A folder uploads its tracks that are not uploaded yet, failed, or changed since \
                (hidden files skipped, links not followed); keys are the paths inside the folder.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var tagOptions: TagOptions

        @Option(help: "Object key (one file only; default: the prefix and the file's name).")
        var key: String?

        @Option(help: "Key prefix, e.g. albums/2026/.")
        var prefix: String?

        @Option(name: .customLong("content-type"), help: "Content type (default: from the extension).")
        var contentType: String?

        @Option(name: .customLong("cache-control"), help: "Cache-Control header for the objects.")
        var cacheControl: String?

        @Option(name: .customLong("meta"), help: ArgumentHelp("User metadata stored with each object (x-amz-meta-KEY); repeatable.", valueName: "KEY=VALUE"))
        var meta: [String] = []

        /// `--meta`, checked by `validate()`.
        var metadata: [String: String] { (try? ObjectMetadata.parse(meta).get()) ?? [:] }

        @Flag(name: .customLong("retry-failed"), help: "For folders: upload only the tracks whose last upload failed.")
        var retryFailed = false

        @Flag(help: "Print a JSON array of the uploads instead of URLs.")
        var json = false

        @OptionGroup var replace: ReplaceOptions

        @Argument(help: "Files or folders to upload.")
        var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one file to push") }
            if key != nil && files.count > 1 { throw ValidationError("--key needs exactly one file") }
            if key != nil && tagOptions.keyTemplate != nil { throw ValidationError("give --key or --key-template, not both") }
            if case .failure(let problem) = ObjectMetadata.parse(meta) { throw ValidationError(problem.description) }
            try HeaderFlags.check(["--content-type": contentType, "--cache-control": cacheControl])
            if let prefix, let problem = ObjectKey.prefixProblem(prefix) { throw ValidationError(problem) }
            if let key {
                do { _ = try ObjectKey.validated(key) } catch { throw ValidationError("--key: \(error.description)") }
            }
        }

        func run() async throws {
            _ = try tagOptions.template()  // a bad template stops everything before the store or the server
            let settings: Settings
            let service: UploadService
            let store: Store
            do {
                settings = try global.settings()
                service = try UploadService(settings: settings, options: transfer.runOptions)
                store = try Store(path: settings.database.value)
            } catch {
                throw CommandFailure(error)
            }
            let queue = UploadQueue(store: store, service: service)
            var worst = ExitStatus.success

            var jobs: [UploadJob] = []
            let tags = TagResolver(store: store)
            let plan = try plan(store: store, tags: tags, bucket: service.bucket)
            var requests = plan.requests
            for problem in plan.skipped {
                Terminal.error("r2up: \(problem.path): \(problem.message)")
                worst = max(worst, problem.status)
            }
            // Tracks that moved inside a pushed folder follow their files: a copy in the bucket each.
            do {
                let moved = try queue.enqueueMoves(plan.moves, contentType: contentType, replace: replace.policy)
                for refusal in moved.refused {
                    Terminal.error("r2up: \(TextColumns.printable(refusal.message))")
                    worst = max(worst, refusal.status)
                }
                jobs += moved.jobs
                requests += moved.uploads.map { plan.request(path: $0.file.path, key: $0.key) }
            } catch {
                throw CommandFailure(error)
            }
            let attributes = ObjectAttributes(cacheControl: cacheControl, metadata: metadata)
            // Tags are read (or found unchanged in the store) for every audio file, so status and
            // the catalog have them; --no-tag-metadata only keeps them off the objects. They are
            // read while the first files upload, and stored after the run.
            let tagged = tags.attributes(attributes, forPaths: requests.map(\.path))
            let runAttributes = tagOptions.noTagMetadata ? RunAttributes(attributes) : tagged
            let quiet = global.quiet || json
            let progress = TransferProgress()
            let display = ProgressDisplay.make(for: progress, quiet: quiet)
            display?.start()
            let toRun = jobs
            let toQueue = requests
            let replacePolicy = replace.policy
            // The files are queued while the first ones upload; what was not queued is said after the run.
            let notQueued = Mutex<[(request: PushRequest, result: Result<EnqueueResult, any Error>)]>([])
            let summary = await Interruption.run {
                await queue.abortAbandonedUploads()
                return await queue.run(
                    toRun,
                    feeding: { feed in
                        await queue.enqueue(toQueue, intent: .asked, replace: replacePolicy, into: feed) { request, result in
                            notQueued.withLock { $0.append((request, result)) }
                        }
                    },
                    attributes: runAttributes,
                    progress: display == nil ? nil : progress,  // counted only when drawn
                    admit: { _ in Terminal.admitsMoreWork }  // a closed stdout starts nothing new
                ) { event in
                    if case .completed(_, let item, _) = event, !quiet {
                        if let display { display.print(item.publicURL.absoluteString) } else { Terminal.output(item.publicURL.absoluteString) }
                    }
                }
            }
            display?.finish()
            let refused = notQueued.withLock { $0 }
            // Files another live r2up is uploading (two pushes of one folder): named one by one
            // when few, else counted in one line.
            var held: [Int32: [String]] = [:]
            for (request, result) in refused {
                if case .success(let outcome) = result, case .heldBy(let pid) = outcome.disposition {
                    held[pid, default: []].append(request.path)
                }
            }
            for (pid, paths) in held.sorted(by: { $0.key < $1.key }) {
                worst = max(worst, .locked)
                if paths.count <= Self.heldNamedOneByOne {
                    for path in paths {
                        Terminal.error("r2up: \(TextColumns.printable(path)): another r2up (pid \(pid)) is uploading it; see r2up queue")
                    }
                } else {
                    Terminal.error("r2up: \(paths.count) files of this push: another r2up (pid \(pid)) is uploading them; see r2up queue")
                }
            }
            for (request, result) in refused {
                switch result {
                case .success(let outcome):
                    if case .conflict(let conflict) = outcome.disposition {
                        Terminal.error("r2up: \(TextColumns.printable(request.path + ": " + conflict.description))")
                        worst = max(worst, .uploadFailed)
                    }
                case .failure(let error):
                    let named = Diagnosis(error, subject: request.path)
                    let diagnosis = request.isFolderFile ? named.ofFileFound : named
                    Terminal.error("r2up: \(TextColumns.printable(diagnosis.message))")
                    worst = max(worst, diagnosis.status)
                }
            }
            do { try await tags.save() } catch { throw CommandFailure(error) }
            for (_, diagnosis) in summary.failed { Terminal.error("r2up: \(TextColumns.printable(diagnosis.message))") }
            for line in summary.stopLines { Terminal.error(TextColumns.printable(line)) }
            if json {
                let items = summary.completed.map {
                    PushedFile(
                        file: $0.fileName, key: $0.r2Key, url: $0.publicURL.absoluteString, size: $0.fileSize,
                        etag: $0.etag ?? "", id: $0.id)
                }
                Terminal.output(JSONOutput.encode(items))
            }
            worst = max(worst, summary.status)
            if worst != .success { throw CommandFailure(status: worst) }
        }

        /// Up to this many files held by another r2up are named; more are counted.
        static let heldNamedOneByOne = 3

        /// The files to push, the tracks that moved, what was skipped (`PushPlan`); the notices of
        /// folders with nothing to push go to stderr.
        private func plan(store: Store, tags: TagResolver, bucket: String) throws -> PushPlan {
            let template = try tagOptions.template()
            let attributes = ObjectAttributes(cacheControl: cacheControl, metadata: metadata)
            let plan: PushPlan
            do {
                plan = try PushPlan(
                    paths: files, undecodable: RawArguments.notUTF8(), key: key, prefix: prefix, template: template,
                    onlyFailed: retryFailed, store: store, tags: tags, bucket: bucket
                ) { path in
                    var own = attributes
                    own.contentType = contentType ?? ContentType.forFile(named: (path as NSString).lastPathComponent)
                    return own
                }
            } catch let refusal as PushPlan.Refusal {
                throw CommandFailure(refusal.diagnosis)
            } catch {
                throw CommandFailure(error)
            }
            if !global.quiet { for line in plan.nothingToPush { Terminal.error(line) } }
            return plan
        }
    }
}

/// `--overwrite` and `--no-clobber` of push and sync.
struct ReplaceOptions: ParsableArguments {
    @Flag(help: "Replace the object at a file's key even when another track's upload (or anything else) is there.")
    var overwrite = false

    @Flag(name: .customLong("no-clobber"), help: "Never replace an existing object, whoever wrote it.")
    var noClobber = false

    func validate() throws {
        if overwrite && noClobber { throw ValidationError("give --overwrite or --no-clobber, not both") }
    }

    var policy: ReplacePolicy { overwrite ? .overwrite : noClobber ? .noClobber : .guarded }
}

/// One entry of `push --json`.
struct PushedFile: Codable {
    /// The file's name, as the history keeps it.
    var file: String
    var key: String
    var url: String
    var size: Int64
    var etag: String
    var id: UUID
}
