import AFProxyCLI

@main
enum AFProxyCtlMain {
    static func main() {
        AFProxyCtl.runMain()
    }
}
