/// The page's files, compiled into the binary (`resources: [.embedInCode(…)]` in Package.swift):
/// nothing to install beside it, nothing fetched from elsewhere, no build step for the page. The
/// page itself (`WebPage`) carries its script and style; only the icon a browser asks for on its
/// own is served apart.
enum WebAssets {
    struct Asset {
        var bytes: [UInt8]
        var contentType: String
    }

    static func asset(at path: Substring) -> Asset? {
        switch path {
        case "/favicon.svg", "/favicon.ico": Asset(bytes: PackageResources.favicon_svg, contentType: "image/svg+xml")
        default: nil
        }
    }

    /// The paths that answer the page.
    static func isPage(_ path: Substring) -> Bool {
        path == "/" || path == "/index.html"
    }
}
