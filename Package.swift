// swift-tools-version:6.1
import PackageDescription

// Upcoming features that catch mistakes early: SE-0335 (`any` for existentials); SE-0409
// (imports are internal unless marked `public import`, so curl, GRDB and TagLib stay out of
// public interfaces); SE-0444 (a file sees only the members of modules it imports itself).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "r2up",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "r2up", targets: ["r2up"]),
        // An app's use of R2UpKit in under 80 lines (docs/guides/embedding.md).
        .executable(name: "r2up-embed-example", targets: ["r2up-embed-example"]),
        .library(name: "R2UpKit", targets: ["R2UpKit"]),
        .library(name: "SigV4", targets: ["SigV4"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // `swift package generate-documentation` for the DocC catalog (scripts/docs.sh).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The HTTP server behind `r2up serve` (R2UpServe only).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .target(name: "CChecksum"),
        .systemLibrary(
            name: "CTagLib",
            pkgConfig: "taglib",
            providers: [.apt(["libtag1-dev"]), .brew(["taglib"])]
        ),
        // A C face over TagLib's C++ API (album artist, disc number, audio properties).
        .target(name: "CAudioTags", dependencies: ["CTagLib"]),
        .target(
            name: "SigV4",
            dependencies: ["COpenSSL"],
            swiftSettings: strictSettings
        ),
        // The layers (docs/development/architecture.md). SwiftPM refuses a cycle between
        // targets, so the arrows below are the only ones there are.
        // The model: job machine, retry rules, failure kinds, plans, key rules. Foundation only.
        .target(name: "R2UpModel", swiftSettings: strictSettings),
        // S3 over curl: the engine (the only CCurl importer), the client, the upload, copy and
        // download drivers, integrity checks, per-provider quirks (Providers/).
        .target(
            name: "R2UpTransfer",
            dependencies: ["R2UpModel", "SigV4", "CCurl", "CChecksum", "COpenSSL", "CZlib"],
            swiftSettings: strictSettings
        ),
        // The SQLite store: the only GRDB importer.
        .target(
            name: "R2UpStore",
            dependencies: ["R2UpModel", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictSettings
        ),
        // Audio tags and containers: the only TagLib (CAudioTags) importer.
        // Album art thumbnails: zlib for their PNG (already the project's, for CRC-32).
        .target(name: "R2UpAudio", dependencies: ["R2UpModel", "CAudioTags", "CZlib"], swiftSettings: strictSettings),
        // The application layer: settings, the queue, the push, sync, watch, pull, catalog, doctor runners.
        .target(
            name: "R2UpKit",
            dependencies: ["R2UpModel", "R2UpTransfer", "R2UpStore", "R2UpAudio", "SigV4"],
            swiftSettings: strictSettings
        ),
        // `r2up serve`: the seeds' screens as a local web app. It sees only R2UpKit's public face
        // (R2UpSession, its events, its track-state observation, its reports).
        .target(
            name: "R2UpServe",
            dependencies: [
                "R2UpKit", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "r2up",
            // The face alone (issue 25): whatever the CLI needs from below goes through R2UpKit
            // (R2UpServe is the web app on that same face).
            dependencies: ["R2UpKit", "R2UpServe", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "r2up-embed-example", dependencies: ["R2UpKit"], path: "Examples/r2up-embed-example",
            swiftSettings: strictSettings
        ),
        .testTarget(name: "SigV4Tests", dependencies: ["SigV4"], swiftSettings: strictSettings),
        // Fixtures the test targets share: scratch folders, the test servers, rows written straight to a store.
        .target(
            name: "R2UpTestSupport",
            dependencies: [
                "R2UpKit", "R2UpModel", "R2UpStore", "R2UpTransfer", "SigV4",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/R2UpTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "R2UpModelTests", dependencies: ["R2UpModel"], swiftSettings: strictSettings
        ),
        .testTarget(
            name: "R2UpTransferTests",
            dependencies: ["R2UpTransfer", "R2UpModel", "R2UpTestSupport", "SigV4"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "R2UpStoreTests",
            dependencies: ["R2UpStore", "R2UpModel", "R2UpTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "R2UpAudioTests", dependencies: ["R2UpAudio", "R2UpModel", "R2UpTestSupport"], swiftSettings: strictSettings
        ),
        .testTarget(
            name: "R2UpKitTests",
            dependencies: [
                "R2UpKit", "R2UpModel", "R2UpStore", "R2UpTransfer", "R2UpAudio", "R2UpTestSupport", "SigV4",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        // The CLI's rendering (tables, bars, status lines, doctor's lines) and flag values, as exact text.
        .testTarget(
            name: "R2UpPresentationTests",
            dependencies: ["r2up", "R2UpKit", "R2UpModel", "R2UpStore", "R2UpTransfer", "R2UpTestSupport", "SigV4"],
            swiftSettings: strictSettings
        ),
        // The web app's parts that need no browser (the tasks the pages start and a stop waits for).
        // ... and its gate and routes through the router in-process (GateTests).
        .testTarget(
            name: "R2UpServeTests",
            dependencies: [
                "R2UpServe", "R2UpKit", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "R2UpCLITests",
            dependencies: ["R2UpKit", "R2UpModel", "R2UpStore", "R2UpTransfer", "R2UpTestSupport"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer harnesses (Fuzz/, run by scripts/fuzz.sh): declared only when R2UP_FUZZ=1, because
// they link only with `-sanitize=fuzzer` (libFuzzer supplies `main`) and the normal build
// should not pay for them. Each links the lowest layer its parser lives in.
if Context.environment["R2UP_FUZZ"] == "1" {
    let harnesses: [(name: String, dependencies: [Target.Dependency])] = [
        ("FuzzXMLReply", ["R2UpTransfer", "R2UpModel"]),
        ("FuzzReplyHead", ["R2UpTransfer", "R2UpModel"]),
        ("FuzzSigV4", ["SigV4"]),
        ("FuzzKeyTemplate", ["R2UpModel"]),
        ("FuzzINI", ["R2UpKit", "R2UpModel", "SigV4"]),
        ("FuzzCatalogIndex", ["R2UpKit", "R2UpStore", "R2UpModel"]),
        ("FuzzInotify", ["R2UpKit"]),
        (
            "FuzzServeRequest",
            [
                "R2UpServe", "R2UpKit", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
    // HTTPTypes (Hummingbird's request head) is named by the serve harness only.
    package.dependencies.append(.package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"))
    package.targets.append(.target(name: "CLibFuzzer", path: "Fuzz/Sources/CLibFuzzer"))
    // What every harness shares: the driver call and the input's fields.
    package.targets.append(.target(
        name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Fuzz/Sources/FuzzSupport", swiftSettings: strictSettings))
    for harness in harnesses {
        package.targets.append(.executableTarget(
            name: harness.name, dependencies: harness.dependencies + ["FuzzSupport"],
            path: "Fuzz/Sources/\(harness.name)", swiftSettings: strictSettings))
    }
}

// The sanitizer runs of the lower layers' unit suites (scripts/sanitize.sh, in CI) need neither
// the CLI nor the web app: with R2UP_UNIT_ONLY=1 the package leaves them (and Hummingbird) out,
// so each sanitized build compiles what those suites test and stays within CI's time.
if Context.environment["R2UP_UNIT_ONLY"] == "1" {
    let above: Set<String> = [
        "R2UpServe", "r2up", "r2up-embed-example", "R2UpKitTests", "R2UpPresentationTests", "R2UpCLITests", "R2UpServeTests",
    ]
    package.targets.removeAll { above.contains($0.name) }
    package.products.removeAll { product in product.name == "r2up" || product.name == "r2up-embed-example" }
    let serverPackages = ["hummingbird", "swift-nio", "swift-log", "swift-service-lifecycle", "swift-argument-parser"]
    package.dependencies.removeAll { dependency in
        serverPackages.contains { String(describing: dependency.kind).contains("/\($0)") }
    }
}
