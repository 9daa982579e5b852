import AFProxyManager
import AFProxyModel
import NIOCore

/// Where the TLS server handler of an intercepted connection goes, until the client's hello is
/// whole: which certificate afproxy answers with depends on it (an RSA leaf for a client that
/// offers no ECDSA), and BoringSSL picks its cipher from the key it is given. Holds the client's
/// bytes until `TLSRecordWatch` has read the hello (or found that it is not one), puts the TLS
/// handler right behind itself, hands it the bytes and leaves. For the first RSA client the key
/// is made off the event loop meanwhile.
final class ClientHelloGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let records: TLSRecordWatch
    private let certificates: any InterceptCertificates
    private let connectHost: String
    private let task: StreamTask
    private var held: [NIOAny] = []
    private var heldBytes = 0
    private var deciding = false

    /// More than a hello can be while afproxy has not answered: the client is not speaking TLS.
    static let maxHeld = TLSRecordScanner.maxFirstMessage + 4 * TLSRecordScanner.maxRecord

    init(records: TLSRecordWatch, certificates: any InterceptCertificates, connectHost: String, task: StreamTask) {
        self.records = records
        self.certificates = certificates
        self.connectHost = connectHost
        self.task = task
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.heldBytes += self.unwrapInboundIn(data).readableBytes
        self.held.append(data)
        guard !self.deciding else {
            if self.heldBytes > Self.maxHeld { context.close(promise: nil) }
            return
        }
        guard self.records.records.client.helloSettled || self.heldBytes > Self.maxHeld else { return }
        self.deciding = true
        let rsa = self.records.records.clientHello.map { !$0.acceptsECDSA } ?? false
        guard rsa else { return self.install(rsa: false, context) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.certificates.prepareRSA(on: context.eventLoop).whenComplete { result in
            let (gate, context) = bound.value
            guard case .success = result else {
                return gate.cannotIssue("the local CA cannot make an RSA key now", context)
            }
            gate.install(rsa: true, context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The hello is not whole yet (or the key is being made): the TLS handler is not here to
        // ask for more, so the gate does.
        context.read()
    }

    private func install(rsa: Bool, _ context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        guard let tls = self.certificates.makeServerHandler(connectHost: self.connectHost, rsa: rsa) else {
            return self.cannotIssue("the local CA cannot issue certificates now", context)
        }
        do {
            try context.pipeline.syncOperations.addHandler(tls, position: .after(self))
        } catch {
            return self.cannotIssue("the TLS handler could not be added: \(error)", context)
        }
        for data in self.held { context.fireChannelRead(data) }
        self.held = []
        context.fireChannelReadComplete()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func cannotIssue(_ message: String, _ context: ChannelHandlerContext) {
        self.task.clientHandshakeFailed(.clientTLSFailed(message))
        context.close(promise: nil)
    }
}
