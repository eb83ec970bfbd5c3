import Foundation

/// One python3 with boto3 answers every bad-input row's question about the bucket and the database.
/// Started once: a python3 started per row (boto3 imported each time) took ~0.4 s of the row.
/// It reads a JSON line `[database, scope]`, writes one JSON line, and exits when its input closes
/// (so it never outlives the test process).
final class StoredStateReader: @unchecked Sendable {
    static let shared = StoredStateReader()

    private static let script = """
        import boto3, json, os, sqlite3, sys
        e = os.environ
        s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                          aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
        bucket = e["R2UP_TEST_BUCKET"]
        while True:
            line = sys.stdin.readline()
            if not line:
                break
            try:
                db, scope = json.loads(line)
                out = {"integrity": None, "historyRows": 0}
                if os.path.exists(db) and os.path.getsize(db) > 0:
                    c = sqlite3.connect(db)
                    try:
                        out["integrity"] = c.execute("PRAGMA integrity_check").fetchone()[0]
                        out["historyRows"] = c.execute("SELECT count(*) FROM history").fetchone()[0]
                    except sqlite3.DatabaseError as error:
                        out["integrity"] = "not a database: %s" % error
                    finally:
                        c.close()
                listed = s3.list_objects_v2(Bucket=bucket, Prefix=scope).get("Contents", [])
                out["objects"] = sorted(o["Key"][len(scope):] for o in listed)
                out["pendingUploads"] = len(s3.list_multipart_uploads(Bucket=bucket, Prefix=scope).get("Uploads", []))
            except Exception as error:
                out = {"error": repr(error)}
            sys.stdout.write(json.dumps(out) + "\\n")
            sys.stdout.flush()
        """

    private let lock = NSLock()
    private var process: Process?
    private var input: FileHandle?
    private var output: FileHandle?
    private var pending = Data()

    /// The reply line for one database and key prefix (JSON; `error` set when python failed).
    func read(database: String, scope: String) async throws -> Data {
        try await ProcessRunner.offThePool { try self.ask(database: database, scope: scope) }
    }

    private func ask(database: String, scope: String) throws -> Data {
        lock.lock()
        defer { lock.unlock() }
        if process?.isRunning != true { try start() }
        guard let input, let output else { throw HarnessError("the state reader did not start") }
        try input.write(contentsOf: try JSONEncoder().encode([database, scope]) + Data("\n".utf8))
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = Data(pending[pending.startIndex..<newline])
                pending = Data(pending[(newline + 1)...])
                return line
            }
            let chunk = output.availableData
            if chunk.isEmpty { throw HarnessError("the state reader (python3, boto3) stopped; its stderr is above") }
            pending.append(chunk)
        }
    }

    private func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script]
        process.environment = ProcessInfo.processInfo.environment
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        try process.run()
        self.process = process
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        pending = Data()
    }
}
