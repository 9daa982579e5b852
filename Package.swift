// swift-tools-version:6.2
import PackageDescription

/// Modules depend one way (docs/how-it-works.md says what each holds):
/// AFProxyModel ← AFProxyRules ← AFProxyTransport (the seam between the tasks and an HTTP engine) ← AFProxyCurl;
/// AFProxyRules ← AFProxyTunnel; AFProxyTransport, AFProxyTunnel, AFProxyStore ← AFProxyManager ← AFProxyListener /
/// AFProxyControl / AFProxyMetrics ← AFProxyDaemon ← executables; AFProxyCurl ← AFProxyDaemon only, which makes the
/// curl session the manager's transport (UpstreamSession+Transport.swift); AFProxyControl ← AFProxyWeb (the
/// dashboard) ← AFProxyDaemon; AFProxyModel ← AFProxyNetwork (the network watcher) ← AFProxyDaemon; AFProxyServerKit
/// (NIO only) ← the four servers (AFProxyListener, AFProxyControl, AFProxyWeb, AFProxyMetrics).
/// AFProxyModel ← AFProxyAPI (the wire API) ← AFProxyControl / AFProxyWeb / AFProxyDaemon / AFProxyCLI (afproxyctl).
/// AFProxyModel, AFProxyAPI, AFProxyStore ← AFProxyTLS (the local CA, the origin side of wss tunnels; swift-nio-ssl,
/// swift-certificates, swift-crypto) ← AFProxyDaemon only with the `Interception` trait; AFProxyControl and
/// AFProxyListener reach it through protocols of their own (`LocalAuthority`, `InterceptCertificates`).
/// libFuzzer's driver without its main (the toolchain's `libclang_rt.fuzzer_no_main`), which
/// scripts/sanitize names here for its address build only: the fuzz targets link it there, with
/// the C++ library it is written against.
let libFuzzer = Context.environment["AFPROXY_LIBFUZZER"]

/// The directory SwiftPM names a build's products after (its triple's first part).
#if arch(arm64)
let hostArchitecture = "aarch64"
#else
let hostArchitecture = "x86_64"
#endif

/// Where the test targets, and only they, write an index. On Linux SwiftPM finds the tests of a
/// test build through the index store (for XCTest, even with XCTest support off) and fails
/// without a unit for every test object; the rest of the build goes without an index
/// (scripts/swift-flags). `.build`'s own store, unless a build elsewhere names its own
/// (scripts/sanitize thread).
let testIndexStore =
    Context.environment["AFPROXY_TEST_INDEX_STORE"]
    ?? "\(Context.packageDirectory)/.build/\(hostArchitecture)-unknown-linux-gnu/debug/index/store"

/// `AFPROXY_SANITIZE=address` (scripts/sanitize's address build): this package's own targets,
/// and only they, compiled with AddressSanitizer and the coverage libFuzzer steers by, in `.build`
/// beside the plain build, whose dependencies it links as they are. `swift build --sanitize`
/// instruments every module, so it needed a build directory of its own and compiled every
/// dependency again (two copies of BoringSSL among them): three quarters of its work, and of
/// what a busy machine made `make test` wait for. What that costs: memory errors inside the
/// dependencies' own code go unseen (ASan's allocator and its checks of libc's memory calls still
/// cover them, as they always did libcurl), and libFuzzer no longer sees the branches of NIO's
/// llhttp, only of our own parsers and checks. `-DAFPROXY_FUZZING` makes the fuzz targets'
/// main hand them to libFuzzer's driver (`libFuzzer` above).
let sanitizer = Context.environment["AFPROXY_SANITIZE"]

let package = Package(
    name: "afproxy",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "afproxy", targets: ["afproxy"]),
        .executable(name: "afproxyctl", targets: ["afproxyctl"]),
    ],
    /// `Interception` (on by default): HTTPS interception, which links the TLS stack (swift-nio-ssl,
    /// swift-certificates, swift-crypto: two copies of BoringSSL, about two thirds of a new
    /// machine's build). `make run` builds first without it (`--disable-default-traits`) so that
    /// a new machine serves within minutes, then builds the rest in the background; every other
    /// build has it.
    traits: [
        .trait(name: "Interception", description: "HTTPS interception with a local CA (the TLS stack)"),
        .default(enabledTraits: ["Interception"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        /// libcurl, and typed wrappers for its variadic calls (Swift cannot call C varargs).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        /// libsystemd: sd_notify, sd_listen_fds_with_names, sd_watchdog_enabled, sd_journal_sendv
        /// (none variadic, so the header only includes; AFProxySystemd is its only user).
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        /// OpenSSL's libcrypto for SHA-256 (CCrypto/shim.h says why not swift-crypto); only
        /// AFProxyStore uses it.
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        /// zlib and brotli's decoder, to show recorded bodies decoded (CDecode/shim.h says why);
        /// only AFProxyStore uses them.
        .systemLibrary(
            name: "CDecode",
            providers: [.apt(["zlib1g-dev", "libbrotli-dev"])]
        ),
        /// libxcrypt's crypt_rn for `proxy-auth-file` hashes (CCrypt/shim.h says why); only
        /// AFProxyStore uses it.
        .systemLibrary(
            name: "CCrypt",
            pkgConfig: "libxcrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        /// The kernel's rtnetlink headers, includes only (CNetlink/shim.h says why); only
        /// AFProxyNetwork uses it.
        .systemLibrary(name: "CNetlink"),
        .target(name: "AFProxyModel"),
        /// The wire API: what travels over the control socket (its bodies, the fast JSON writers
        /// and the one encoder configuration they are held to, HAR, the live feed) and where the
        /// socket is, and the task and rule values it carries, re-exported one by one
        /// (WireTypes.swift); afproxyctl reads the daemon through it and imports nothing else of ours.
        .target(name: "AFProxyAPI", dependencies: ["AFProxyModel", "AFProxyRules"]),
        /// The rules a person sets, each a match, an effect, a scope and an origin (RuleSet says how):
        /// throttle, hold, destination, pin and access rules, their matching, and the throttle's
        /// buckets (`Throttler`, which the transports consult per chunk). Values and locks, no I/O.
        .target(name: "AFProxyRules", dependencies: ["AFProxyModel"]),
        /// The network watcher: a netlink route socket on a thread of its own, and the
        /// reachability decision made from what it reports.
        .target(name: "AFProxyNetwork", dependencies: ["CNetlink", "AFProxyModel"]),
        /// What must survive a restart and the files it names: the download journal and each
        /// download's partial file, in the state directory and where the person asked; the rule
        /// sets' state files; `proxy-auth-file` and the system's crypt that checks its users
        /// (`PasswordHash`, which the listener's `ProxyAuthenticator` gets as a `PasswordHashing`); and
        /// the I/O executor their writes run on (a NIOThreadPool of its own).
        .target(
            name: "AFProxyStore",
            dependencies: [
                "CCrypto", "CCrypt", "CDecode", "AFProxyModel", "AFProxyRules",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        /// The local CA of HTTPS interception (`ca-dir`) and the TLS server side of intercepted
        /// connections: leaf certificates minted per SNI name, cached. Its own module so that
        /// swift-nio-ssl and swift-certificates reach only the listener, the control socket and
        /// the daemon.
        .target(
            name: "AFProxyTLS",
            dependencies: [
                "AFProxyModel", "AFProxyAPI", "AFProxyStore", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA keys for the leaves of clients that cannot take ECDSA (X509 links it already).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        /// The seam between the tasks and the HTTP engine, as async-http-client's
        /// `HTTPExecutableRequest` / `HTTPRequestExecutor`: what a task asks for (`TransferRequest`),
        /// the handle it commands (`HTTPTransfer`) and what it hears back (`HTTPTransferDelegate`).
        /// The manager owns these; curl implements them; the tests' in-memory transport too.
        .target(name: "AFProxyTransport", dependencies: ["AFProxyModel", "AFProxyRules"]),
        /// The upstream session: one curl multi handle on a thread of its own, the only code that
        /// touches curl; its transfers are the seam's `HTTPTransfer`s.
        .target(
            name: "AFProxyCurl",
            dependencies: [
                "CCurl", "AFProxyModel", "AFProxyRules", "AFProxyTransport",
            ]
        ),
        /// splice(2) and epoll for AFProxyTunnel's kernel relay, its only user (CSplice.h says why).
        .target(name: "CSplice"),
        /// CONNECT tunnels: the upstream channel (ClientBootstrap) on the client's event loop,
        /// getaddrinfo on NIO's thread pool, and the byte relay between the two channels.
        .target(
            name: "AFProxyTunnel",
            dependencies: [
                "AFProxyModel", "AFProxyRules", "AFProxyServerKit", "CSplice",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ]
        ),
        .target(
            name: "AFProxyManager",
            dependencies: [
                "AFProxyModel", "AFProxyRules", "AFProxyTransport", "AFProxyTunnel", "AFProxyStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        /// What the four servers share (the proxy listener, the control socket, the dashboard and the
        /// metrics port): the connection cap and its refusals, the idle and request timers, the
        /// writing of an answer of their own, and their listening sockets as services of the one
        /// group (bind or adopt, graceful stop), and how an address reads in logs (which the
        /// tunnels use too). NIO and the model only: it knows nothing of tasks.
        .target(
            name: "AFProxyServerKit",
            dependencies: [
                "AFProxyModel",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "AFProxyListener",
            dependencies: [
                "AFProxyModel", "AFProxyRules", "AFProxyManager", "AFProxyServerKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                // HTTP/2 to the clients of intercepted connections that offer it (InterceptSetup+HTTP2.swift),
                // with the TLS stack only: the quick build of `make run` goes without both.
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: .when(traits: ["Interception"])),
                .product(name: "NIOHPACK", package: "swift-nio-http2", condition: .when(traits: ["Interception"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "AFProxyControl",
            dependencies: [
                "AFProxyModel", "AFProxyAPI", "AFProxyRules", "AFProxyManager", "AFProxyServerKit", "AFProxyStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        /// systemd glue: the notify protocol, named listen descriptors, the watchdog, the journal.
        .target(
            name: "AFProxySystemd",
            dependencies: [
                "CSystemd",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        /// The Prometheus view of the session (`GET /metrics`, `metrics-listen`): its own module so
        /// that swift-metrics and swift-prometheus reach the daemon only, not the CLI, the fuzz
        /// targets or the manager's tests.
        .target(
            name: "AFProxyMetrics",
            dependencies: [
                "AFProxyModel", "AFProxyManager", "AFProxyServerKit",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        /// The web dashboard (`web-listen`): its page, compiled into the binary as resources, and
        /// the control API behind a token, Host and Origin check (`WebAccess`).
        .target(
            name: "AFProxyWeb",
            dependencies: [
                "AFProxyModel", "AFProxyAPI", "AFProxyControl", "AFProxyServerKit", "AFProxyStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [
                .embedInCode("Resources/index.html"), .embedInCode("Resources/app.js"),
                .embedInCode("Resources/app.css"), .embedInCode("Resources/favicon.svg"),
            ]
        ),
        .target(
            name: "AFProxyDaemon",
            dependencies: [
                "AFProxyModel", "AFProxyRules", "AFProxyCurl", "AFProxyManager", "AFProxyListener", "AFProxyControl",
                "AFProxyStore", "AFProxySystemd", "AFProxyNetwork", "AFProxyMetrics", "AFProxyWeb", "AFProxyServerKit",
                "AFProxyAPI", "AFProxyTunnel",
                .target(name: "AFProxyTLS", condition: .when(traits: ["Interception"])),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Interception"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "afproxy", dependencies: ["AFProxyDaemon"]),
        /// afproxyctl's client, views and commands; it talks to the daemon only through the socket.
        .target(
            name: "AFProxyCLI",
            dependencies: [
                "AFProxyAPI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "afproxyctl", dependencies: ["AFProxyCLI"]),
        /// Fuzz targets (Fuzz/; docs/development.md, "Sanitizers and fuzzing"). A plain build
        /// replays corpus files through them (scripts/test does, with the seed corpus);
        /// scripts/sanitize's address build makes them libFuzzer targets (`-DAFPROXY_FUZZING`,
        /// coverage flags, and libFuzzer's driver linked from `AFPROXY_LIBFUZZER`), so that one
        /// instrumented build serves both the ASan suite and fuzzing.
        .target(name: "FuzzDriver", path: "Fuzz/FuzzDriver"),
        .target(
            name: "FuzzSupport",
            dependencies: ["FuzzDriver"],
            path: "Fuzz/FuzzSupport",
            linkerSettings: libFuzzer.map { [.unsafeFlags(["-Xlinker", $0, "-Xlinker", "-lstdc++"])] } ?? []
        ),
        .executableTarget(
            name: "FuzzRequest",
            dependencies: [
                "FuzzSupport", "AFProxyListener", "AFProxyModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Fuzz/FuzzRequest"
        ),
        .executableTarget(
            name: "FuzzResponseHead",
            dependencies: [
                "FuzzSupport", "AFProxyCurl", "AFProxyListener", "AFProxyModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Fuzz/FuzzResponseHead"
        ),
        /// What the unit tests share: an in-memory transport in place of curl and the tunnel relay,
        /// and scratch directories. A library target under Tests/, since test targets cannot
        /// import one another.
        .target(
            name: "AFProxyTestSupport",
            dependencies: [
                "AFProxyManager", "AFProxyTransport", "AFProxyTunnel", "AFProxyModel", "AFProxyRules",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/AFProxyTestSupport"
        ),
        .testTarget(name: "AFProxyModelTests", dependencies: ["AFProxyModel"]),
        .testTarget(name: "AFProxyAPITests", dependencies: ["AFProxyAPI", "AFProxyModel"]),
        .testTarget(name: "AFProxyRulesTests", dependencies: ["AFProxyRules", "AFProxyModel"]),
        .testTarget(
            name: "AFProxyServerKitTests",
            dependencies: [
                "AFProxyServerKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "AFProxyNetworkTests",
            dependencies: ["AFProxyNetwork", "AFProxyModel", "AFProxyTestSupport", "CNetlink"]),
        .testTarget(
            name: "AFProxyStoreTests",
            dependencies: ["AFProxyStore", "AFProxyModel", "AFProxyRules", "AFProxyTestSupport"]),
        .testTarget(
            name: "AFProxyListenerTests",
            dependencies: [
                "AFProxyListener", "AFProxyManager", "AFProxyModel", "AFProxyRules", "AFProxyStore",
                "AFProxyServerKit", "AFProxyTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]
        ),
        .testTarget(
            name: "AFProxyCurlTests", dependencies: ["AFProxyCurl", "AFProxyModel", "AFProxyRules", "AFProxyTransport"]),
        .testTarget(
            name: "AFProxyControlTests",
            dependencies: [
                "AFProxyControl", "AFProxyAPI", "AFProxyManager", "AFProxyModel", "AFProxyRules",
                "AFProxyServerKit", "AFProxyTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "AFProxyCLITests", dependencies: ["AFProxyCLI", "AFProxyAPI", "AFProxyModel", "AFProxyRules"]),
        .testTarget(
            name: "AFProxyManagerTests",
            dependencies: [
                "AFProxyManager", "AFProxyModel", "AFProxyRules", "AFProxyTransport", "AFProxyTunnel",
                "AFProxyTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "AFProxyTunnelTests",
            dependencies: [
                "AFProxyTunnel", "AFProxyModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "AFProxyTLSTests",
            dependencies: [
                "AFProxyTLS", "AFProxyAPI", "AFProxyStore", "AFProxyTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "AFProxyDaemonTests", dependencies: ["AFProxyDaemon", "AFProxyRules"]),
        .testTarget(
            name: "AFProxyWebTests",
            dependencies: [
                "AFProxyWeb", "AFProxyModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "AFProxyMetricsTests",
            dependencies: [
                "AFProxyMetrics", "AFProxyModel",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "AFProxySystemdTests",
            dependencies: ["AFProxySystemd", .product(name: "Logging", package: "swift-log")]
        ),
    ]
)

// Our own targets treat warnings as errors (SE-0480); the dependencies' warnings stay warnings.
// System library targets (the C shims) have no Swift settings.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
}
for target in package.targets where target.type == .test {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-index-store-path", testIndexStore])]
}
if sanitizer == "address" {
    let coverage = "-sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp"
    for target in package.targets where target.type != .system {
        target.swiftSettings =
            (target.swiftSettings ?? []) + [
                .unsafeFlags(["-sanitize=address", coverage]), .define("AFPROXY_FUZZING"),
            ]
        target.cSettings =
            (target.cSettings ?? []) + [.unsafeFlags(["-fsanitize=address", "-f" + coverage.dropFirst()])]
    }
    // lld: the system's gold warns about every local symbol of the ASan runtime it cannot export.
    for target in package.targets where target.type == .executable {
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=address", "-use-ld=lld"])]
    }
}
