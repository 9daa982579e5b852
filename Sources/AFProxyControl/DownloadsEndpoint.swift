import AFProxyAPI
import AFProxyManager
import AFProxyModel
import FoundationEssentials
import NIOHTTP1

/// `POST /v1/downloads`: starts a download task from the JSON body. Starting one makes or
/// truncates its file, so it is answered off the event loop.
struct DownloadsEndpoint: ControlEndpoint {
    enum Route: Sendable, Equatable {
        case start
    }

    let manager: SessionManager

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        if let refusal = request.single("POST") { return .failure(refusal) }
        return .success(.start)
    }

    func blocks(_ route: Route) -> Bool { true }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        let body: DownloadRequestBody
        do {
            body = try JSONDecoder().decode(DownloadRequestBody.self, from: Data(request.body.readableBytesView))
        } catch {
            return .error(.badRequest, #"expected a JSON object {"url": …, "path": …, "headers": […], "sha256": …}"#)
        }
        var headers: HTTPHeaderList = []
        for line in body.headers ?? [] {
            guard let field = HTTPHeaderField(line: line) else {
                return .error(
                    .badRequest, "a header must be \"Name: value\" with a token for its name, not \(line.prefix(100))")
            }
            headers.append(field)
        }
        let spec = DownloadSpec(
            url: body.url, headers: headers, path: body.path, sha256: body.sha256, force: body.force ?? false,
            keepPartial: body.keepPartial ?? false, pins: body.pins, insecure: body.insecure ?? false,
            client: request.caller.name)
        do throws(ManagerError) {
            return .task(.created, try self.manager.downloads.start(spec))
        } catch {
            return .refusal(error)
        }
    }
}
