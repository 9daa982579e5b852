/// The page's files, compiled into the binary (`resources: [.embedInCode(…)]` in Package.swift):
/// nothing to install beside it, nothing fetched from elsewhere, no build step for the page.
enum WebAssets {
    struct Asset {
        var bytes: [UInt8]
        var contentType: String
    }

    static func asset(at path: Substring) -> Asset? {
        switch path {
        case "/", "/index.html": Asset(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8")
        case "/app.js": Asset(bytes: PackageResources.app_js, contentType: "text/javascript; charset=utf-8")
        case "/app.css": Asset(bytes: PackageResources.app_css, contentType: "text/css; charset=utf-8")
        case "/favicon.svg", "/favicon.ico": Asset(bytes: PackageResources.favicon_svg, contentType: "image/svg+xml")
        default: nil
        }
    }
}
