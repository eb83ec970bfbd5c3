import ArgumentParser
import Uploader

@main
struct R2Up: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "r2up", abstract: "Upload tracks to S3-compatible storage.")
}
