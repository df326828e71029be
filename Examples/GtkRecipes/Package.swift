// swift-tools-version: 6.2
import PackageDescription

// A GTK 4 app on SceneSyncClient: each window mirrors one scene, and every running copy follows the others.
// A package of its own, so that the main package never needs GTK: `make check-gtk` builds and checks it.
let package = Package(
    name: "GtkRecipes",
    dependencies: [
        .package(name: "scenesync", path: "../..")
    ],
    targets: [
        // GTK 4 from Debian's libgtk-4-dev, found through pkg-config.
        .systemLibrary(name: "CGtk4", pkgConfig: "gtk4", providers: [.apt(["libgtk-4-dev"])]),
        .executableTarget(
            name: "GtkRecipes",
            dependencies: ["CGtk4", .product(name: "SceneSyncClient", package: "scenesync")],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
                .treatAllWarnings(as: .error),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
