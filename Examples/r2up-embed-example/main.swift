// r2up embedded in a program: push the files named on the command line and print one JSON
// object per event. Settings come from the environment only because this is a command-line
// example; an app passes its own values to R2UpSession.Configuration.
import Foundation
import R2UpKit

let environment = ProcessInfo.processInfo.environment
let files = Array(CommandLine.arguments.dropFirst())
guard !files.isEmpty else {
    FileHandle.standardError.write(Data("usage: r2up-embed-example FILE...\n".utf8))
    exit(2)
}

func line(_ event: String, _ fields: [String: Any]) {
    var object = fields
    object["event"] = event
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    else { return }
    print(String(decoding: data, as: UTF8.self))
}

let configuration = R2UpSession.Configuration(
    endpoint: environment["R2UP_ENDPOINT"] ?? "",
    accessKeyID: environment["AWS_ACCESS_KEY_ID"] ?? "",
    secretAccessKey: environment["AWS_SECRET_ACCESS_KEY"] ?? "",
    region: environment["AWS_REGION"],
    bucket: environment["R2UP_BUCKET"] ?? "",
    publicURL: environment["R2UP_PUBLIC_URL"],
    databasePath: environment["R2UP_DB"] ?? "r2up.sqlite")

let session: R2UpSession
do {
    session = try R2UpSession(configuration)
} catch {
    line("failed", ["message": error.description])
    exit(3)
}

let events = session.events  // subscribe before pushing, so no event is missed
Task { await session.push(files) }

for await event in events {
    switch event {
    case .queued(let file):
        line("queued", ["file": file.path, "key": file.key, "size": file.size])
    case .started(let file):
        line("started", ["file": file.path, "key": file.key])
    case .progress(let file, let sent):
        line("progress", ["file": file.path, "sent": sent, "size": file.size])
    case .completed(let file, let item):
        line("completed", [
            "file": item.fileName, "path": file.path, "key": item.r2Key, "url": item.publicURL.absoluteString,
            "size": item.fileSize,
        ])
    case .failed(let failure):
        line("failed", ["file": failure.path ?? NSNull(), "message": failure.message])
    case .finished(let result):
        exit(result.category == .success ? 0 : 1)
    case .jobStateChanged, .trackStateChanged:
        break  // an interface would redraw a row here
    }
}
