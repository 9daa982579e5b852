/// The media type a file is served as by its name's extension (map-local answers). A table of our
/// own: Foundation on Linux has no UTType, and the daemon reads no mime.types file that a machine
/// may or may not have; these are the types a developer maps to, anything else is bytes.
package enum MediaType {
    package static func forFile(named name: String) -> String {
        let base = name.split(separator: "/").last ?? ""
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return "application/octet-stream" }
        switch base[base.index(after: dot)...].lowercased() {
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json", "map": return "application/json"
        case "txt", "log": return "text/plain; charset=utf-8"
        case "csv": return "text/csv; charset=utf-8"
        case "xml": return "application/xml"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "avif": return "image/avif"
        case "ico": return "image/x-icon"
        case "wasm": return "application/wasm"
        case "pdf": return "application/pdf"
        case "woff": return "font/woff"
        case "woff2": return "font/woff2"
        case "mp4": return "video/mp4"
        case "webm": return "video/webm"
        case "mp3": return "audio/mpeg"
        case "zip": return "application/zip"
        case "gz": return "application/gzip"
        default: return "application/octet-stream"
        }
    }
}
