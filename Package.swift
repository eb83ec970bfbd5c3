// swift-tools-version:6.1
import PackageDescription

// Upcoming features that catch mistakes early: SE-0335 (`any` for existentials).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "r2up",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "r2up", targets: ["r2up"]),
        .library(name: "Uploader", targets: ["Uploader"]),
        .library(name: "SigV4", targets: ["SigV4"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
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
        .target(
            name: "Uploader",
            dependencies: [
                "CCurl", "CChecksum", "COpenSSL", "CZlib", "SigV4", "CAudioTags",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "r2up",
            dependencies: [
                "Uploader",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "SigV4Tests", dependencies: ["SigV4"], swiftSettings: strictSettings),
        .testTarget(name: "UploaderTests", dependencies: ["Uploader", "SigV4"], swiftSettings: strictSettings),
        .testTarget(name: "R2UpCLITests", dependencies: ["Uploader"], swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
