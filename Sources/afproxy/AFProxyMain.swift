import AFProxyDaemon

/// The daemon's entry point. `@main` rather than top-level code: closures in top-level code are
/// inferred to be main-actor isolated and trap when curl's or NIO's threads call them.
@main
enum AFProxyMain {
    static func main() async {
        await AFProxyCommand.main()
    }
}
