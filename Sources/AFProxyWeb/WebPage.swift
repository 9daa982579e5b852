import AFProxyModel

/// The dashboard's page as one answer: its style, its script, its icon and the first snapshot of
/// the live tasks are written into the HTML, so the browser draws the task list without a request
/// after the page. Each request costs a busy browser far more than the daemon's answer does, and
/// the page's first render is what a person waits for. The inline script and style are allowed by
/// a nonce new in every answer, so the policy stays as strict as it was for separate files.
enum WebPage {
    /// Records the page carries: more than a screenful of rows (the page draws the lowest ids
    /// first), few enough that the page stays small with thousands of live tasks.
    static let firstTasks = 100

    private enum Piece {
        case text([UInt8])
        case nonce, style, script, icon, snapshot
    }

    /// `index.html` cut at its `{{…}}` marks, once.
    private static let pieces: [Piece] = {
        var pieces: [Piece] = []
        var rest = PackageResources.index_html[...]
        let open = Array("{{".utf8)
        let close = Array("}}".utf8)
        while let start = rest.firstRange(of: open) {
            pieces.append(.text(Array(rest[..<start.lowerBound])))
            guard let end = rest[start.upperBound...].firstRange(of: close) else {
                preconditionFailure("index.html: a {{ without its }}")
            }
            switch String(decoding: rest[start.upperBound..<end.lowerBound], as: UTF8.self) {
            case "nonce": pieces.append(.nonce)
            case "style": pieces.append(.style)
            case "script": pieces.append(.script)
            case "icon": pieces.append(.icon)
            case "snapshot": pieces.append(.snapshot)
            case let name: preconditionFailure("index.html: unknown mark {{\(name)}}")
            }
            rest = rest[end.upperBound...]
        }
        pieces.append(.text(Array(rest)))
        return pieces
    }()

    /// The policy of the page's answer: only its own inline script and style (by `nonce`), and
    /// requests to its own origin. Images may also be `blob:` addresses: the task page shows a
    /// recorded image body from the bytes it read (a blob made by the page's own script).
    static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'self'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; img-src 'self' data: blob:; "
            + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    /// The page with `snapshot`, one `GET /v1/live` line, as its first list.
    static func render(nonce: String, snapshot: [UInt8]) -> [UInt8] {
        var page: [UInt8] = []
        page.reserveCapacity(
            PackageResources.index_html.count + PackageResources.app_css.count + PackageResources.app_js.count
                + PackageResources.favicon_svg.count + snapshot.count + snapshot.count / 16)
        for piece in self.pieces {
            switch piece {
            case .text(let bytes): page += bytes
            case .nonce: page += nonce.utf8
            case .style: page += PackageResources.app_css
            case .script: page += PackageResources.app_js
            case .icon: page += PackageResources.favicon_svg
            case .snapshot: Self.appendScriptSafe(snapshot, to: &page)
            }
        }
        return page
    }

    /// JSON in a `<script>` element must not hold `</script>` or `<!--`: every `<` becomes its
    /// JSON escape. JSON has `<` only inside strings, where the escape means the same character.
    private static func appendScriptSafe(_ json: [UInt8], to page: inout [UInt8]) {
        let escape = Array(#"\u003c"#.utf8)
        for byte in json {
            if byte == UInt8(ascii: "<") {
                page += escape
            } else {
                page.append(byte)
            }
        }
    }
}
