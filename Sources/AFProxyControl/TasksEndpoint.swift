import AFProxyAPI
import AFProxyManager
import AFProxyModel
import AFProxyStore
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// `/v1/tasks`: the tasks and what a person does to them.
///
///     GET  /v1/tasks[?all=1]                  live tasks (and the history)
///     GET  /v1/tasks/{id}                     one, live or from the history
///     GET  /v1/tasks/{id}/body[?side=request|response][&decoded=1]  a body a record rule kept
///                                             (response by default), its content codings undone
///     GET  /v1/tasks/{id}/messages            a WebSocket task's messages a record rule kept
///     POST /v1/tasks/{id}/suspend|resume|cancel
///     POST /v1/tasks/{id}/replay              the request sent again as a new task (201 with it)
///     PATCH /v1/tasks/{id}/request            change a held request before it goes (RequestEditBody)
///     PATCH /v1/tasks/{id}/response           change a response held at its head (ResponseEditBody)
///     POST /v1/tasks/{id}/respond             answer a held request in the origin's place (RespondBody)
///     POST /v1/tasks/suspend|resume?all=1     every live task
struct TasksEndpoint: ControlEndpoint {
    enum Verb: String, Sendable, CaseIterable {
        case suspend
        case resume
        case cancel
    }

    enum Route: Sendable, Equatable {
        case list(includeHistory: Bool)
        case task(Int)
        case body(Int, BodySide)
        case messages(Int)
        case replay(Int)
        case edit(Int)
        case editResponse(Int)
        case respond(Int)
        case verb(Verb, Int)
        case verbAll(Verb)
    }

    let manager: SessionManager

    func route(_ request: ControlRequest) -> Result<Route, RouteRefusal> {
        let (method, rest) = (request.method, request.rest)
        guard rest.count <= 3 else { return .failure(.noSuchEndpoint(request.path)) }
        let notAllowed = RouteRefusal.notAllowed(method, on: request.path)
        switch rest.count {
        case 1:
            guard method == "GET" else { return .failure(notAllowed) }
            return .success(.list(includeHistory: request.all))
        case 2:
            if method == "POST", let verb = Verb(rawValue: rest[1]) {
                guard verb != .cancel else {
                    return .failure(RouteRefusal(status: 400, message: "cancel takes task ids, not all=1"))
                }
                guard request.all else {
                    return .failure(RouteRefusal(status: 400, message: "POST /v1/tasks/\(verb.rawValue) needs ?all=1"))
                }
                return .success(.verbAll(verb))
            }
            guard method == "GET" else { return .failure(notAllowed) }
            return ControlRequest.id(rest[1]).map { .task($0) }
        default:
            if rest[2] == "messages" {
                guard method == "GET" else { return .failure(notAllowed) }
                return ControlRequest.id(rest[1]).map { .messages($0) }
            }
            if rest[2] == "body" {
                guard method == "GET" else { return .failure(notAllowed) }
                guard let side = BodySide(rawValue: request.query["side"] ?? "response") else {
                    return .failure(RouteRefusal(status: 400, message: "side must be request or response"))
                }
                return ControlRequest.id(rest[1]).map { .body($0, side) }
            }
            if rest[2] == "request" || rest[2] == "response" {
                guard method == "PATCH" else { return .failure(notAllowed) }
                return ControlRequest.id(rest[1]).map { rest[2] == "request" ? .edit($0) : .editResponse($0) }
            }
            guard method == "POST" else { return .failure(notAllowed) }
            if rest[2] == "replay" { return ControlRequest.id(rest[1]).map { .replay($0) } }
            if rest[2] == "respond" { return ControlRequest.id(rest[1]).map { .respond($0) } }
            guard let verb = Verb(rawValue: rest[2]) else {
                return .failure(
                    RouteRefusal(
                        status: 404, message: "unknown verb \(rest[2]): use suspend, resume, cancel, replay or respond")
                )
            }
            return ControlRequest.id(rest[1]).map { .verb(verb, $0) }
        }
    }

    /// A body is read from its file (a replay's request body too).
    func blocks(_ route: Route) -> Bool {
        switch route {
        case .body, .replay: true
        default: false
        }
    }

    func answer(_ route: Route, to request: ControlRequest) -> ControlAnswer {
        switch route {
        case .messages(let id):
            return self.messages(id)
        case .body(let id, let side):
            return self.body(id, side, decoded: request.query["decoded"] == "1")
        case .replay(let id):
            var edit: RequestEdit?
            if request.body.readableBytes > 0 {
                switch self.decodeEdit(request) {
                case .success(let decoded): edit = decoded
                case .failure(let refusal): return .error(.badRequest, refusal.message)
                }
            }
            do throws(ManagerError) {
                return .task(.created, try self.manager.replay(id: id, edit: edit))
            } catch {
                return .refusal(error)
            }
        case .edit(let id):
            return self.edit(id, request)
        case .respond(let id):
            return self.respond(id, request)
        case .editResponse(let id):
            return self.editResponse(id, request)
        case .list(let includeHistory):
            return .tasks(.ok, TaskList(tasks: self.manager.tasks(includeHistory: includeHistory)))
        case .task(let id):
            guard let record = self.manager.task(id: id) else { return .error(.notFound, "no task with id \(id)") }
            return .task(.ok, record)
        case .verb(let verb, let id):
            do throws(ManagerError) {
                switch verb {
                case .suspend: return .task(.ok, try self.manager.suspend(id: id))
                case .resume: return .task(.ok, try self.manager.resume(id: id))
                case .cancel: return .task(.ok, try self.manager.cancel(id: id))
                }
            } catch {
                return .refusal(error)
            }
        case .verbAll(let verb):
            let changed = verb == .suspend ? self.manager.suspendAll() : self.manager.resumeAll()
            return .tasks(.ok, TaskList(tasks: changed))
        }
    }

    /// A `RequestEditBody` (an edit at a hold, a replay's changes) as the manager takes it.
    private func decodeEdit(_ request: ControlRequest) -> Result<RequestEdit, RequestEdit.Refusal> {
        let body: RequestEditBody
        do {
            body = try JSONDecoder().decode(RequestEditBody.self, from: Data(request.body.readableBytesView))
        } catch {
            return .failure(
                RequestEdit.Refusal(
                    message:
                        #"expected a JSON object {"method": …, "path": …, "setHeaders": ["Name: value"], "removeHeaders": […], "body": base64}"#
                ))
        }
        var edit = RequestEdit(method: body.method, target: body.path, removeHeaders: body.removeHeaders ?? [])
        switch Self.fields(body.setHeaders) {
        case .success(let fields): edit.setHeaders = fields
        case .failure(let refusal): return .failure(refusal)
        }
        if let text = body.body {
            guard let bytes = Data(base64Encoded: text) else {
                return .failure(RequestEdit.Refusal(message: "body must be base64"))
            }
            edit.body = [UInt8](bytes)
        }
        guard !edit.isEmpty else {
            return .failure(RequestEdit.Refusal(message: "the edit changes nothing: name what to change"))
        }
        return .success(edit)
    }

    private func edit(_ id: Int, _ request: ControlRequest) -> ControlAnswer {
        let edit: RequestEdit
        switch self.decodeEdit(request) {
        case .success(let decoded): edit = decoded
        case .failure(let refusal): return .error(.badRequest, refusal.message)
        }
        do throws(ManagerError) {
            return .task(.ok, try self.manager.edit(id: id, edit))
        } catch {
            return .refusal(error)
        }
    }

    private func editResponse(_ id: Int, _ request: ControlRequest) -> ControlAnswer {
        let body: ResponseEditBody
        do {
            body = try JSONDecoder().decode(ResponseEditBody.self, from: Data(request.body.readableBytesView))
        } catch {
            return .error(
                .badRequest,
                #"expected a JSON object {"status": …, "setHeaders": ["Name: value"], "removeHeaders": […], "body": base64}"#
            )
        }
        var edit = ResponseEdit(status: body.status, removeHeaders: body.removeHeaders ?? [])
        switch Self.fields(body.setHeaders) {
        case .success(let fields): edit.setHeaders = fields
        case .failure(let refusal): return .error(.badRequest, refusal.message)
        }
        if let text = body.body {
            guard let bytes = Data(base64Encoded: text) else { return .error(.badRequest, "body must be base64") }
            edit.body = [UInt8](bytes)
        }
        guard !edit.isEmpty else { return .error(.badRequest, "the edit changes nothing: name what to change") }
        do throws(ManagerError) {
            return .task(.ok, try self.manager.editResponse(id: id, edit))
        } catch {
            return .refusal(error)
        }
    }

    private func respond(_ id: Int, _ request: ControlRequest) -> ControlAnswer {
        let body: RespondBody
        do {
            body = try JSONDecoder().decode(RespondBody.self, from: Data(request.body.readableBytesView))
        } catch {
            return .error(
                .badRequest, #"expected a JSON object {"status": 503, "headers": ["Name: value"], "body": base64}"#)
        }
        var bytes: [UInt8] = []
        if let text = body.body {
            guard let data = Data(base64Encoded: text) else { return .error(.badRequest, "body must be base64") }
            bytes = [UInt8](data)
        }
        let answer: ProxyAnswer
        switch Self.fields(body.headers) {
        case .success(let fields):
            do throws(RequestEdit.Refusal) {
                answer = try ProxyAnswer(status: body.status, headers: fields, body: bytes)
            } catch {
                return .error(.badRequest, error.message)
            }
        case .failure(let refusal):
            return .error(.badRequest, refusal.message)
        }
        do throws(ManagerError) {
            return .task(.ok, try self.manager.respond(id: id, answer))
        } catch {
            return .refusal(error)
        }
    }

    /// `Name: value` lines as fields, or the answer to the first that is not one.
    private static func fields(_ lines: [String]?) -> Result<HTTPHeaderList, RequestEdit.Refusal> {
        var fields: HTTPHeaderList = []
        for line in lines ?? [] {
            guard let field = HTTPHeaderField(line: line) else {
                return .failure(
                    RequestEdit.Refusal(
                        message: "a header must be \"Name: value\" with a token for its name, not \(line.prefix(100))"))
            }
            fields.append(field)
        }
        return .success(fields)
    }

    /// What a decoded body may grow to: a small body may stand for a huge one (a zip bomb).
    static let decodedLimit = 256 << 20

    /// The kept bytes as they passed (content codings and all), typed as the task's own
    /// `Content-Type` said; 404 when no rule kept that body, 410 when it was removed to keep
    /// `record-max-total`.
    private func body(_ id: Int, _ side: BodySide, decoded: Bool) -> ControlAnswer {
        guard let record = self.manager.task(id: id) else { return .error(.notFound, "no task with id \(id)") }
        guard let bodies = record.bodies, let store = self.manager.bodies else {
            return .error(
                .notFound,
                "task \(id) has no recorded \(side.rawValue) body: no record rule named it when it started "
                    + "(afproxyctl record HOST)")
        }
        guard bodies[side] != nil else {
            let why = side == .request && record.kind != .upload ? "it sent none" : "its record rule keeps none"
            return .error(.notFound, "task \(id) has no recorded \(side.rawValue) body: \(why)")
        }
        let bytes: Data
        do {
            bytes = try store.contents(task: id, side: side) ?? Data()
        } catch {
            return .error(.internalServerError, "\(error)")
        }
        if bytes.isEmpty, store.wasRemoved(task: id, side: side) {
            return .error(.gone, "task \(id)'s \(side.rawValue) body was removed to keep record-max-total")
        }
        let headers = side == .request ? record.requestHeaders : record.responseHeaders ?? []
        let type = headers.first { $0.name.lowercased() == "content-type" }?.value ?? "application/octet-stream"
        let codings = headers.filter { $0.hasName("content-encoding") }.flatMap { $0.value.split(separator: ",") }
            .map { String($0.trimmingSpaces()) }
        guard decoded, !codings.isEmpty else { return .body(.ok, contentType: type, ByteBuffer(bytes: bytes)) }
        switch ContentDecoder.decode([UInt8](bytes), codings: codings, limit: Self.decodedLimit) {
        case .success(let result):
            // The decoded body, whole or its start (a body kept cut, or past the limit).
            return .body(.ok, contentType: type, ByteBuffer(bytes: result.bytes))
        case .failure(let failure):
            return .error(.unprocessableEntity, "task \(id)'s \(side.rawValue) body: \(failure)")
        }
    }
}
