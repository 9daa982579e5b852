import AFProxyModel

extension JSONWriter {
    /// A task's `bodies`, keys sorted as the API's encoder sorts them.
    mutating func recordedBodies(_ value: RecordedBodies?) {
        guard let value else { return self.null() }
        self.open("{")
        self.key("request"); self.recordedBody(value.request)
        self.key("response"); self.recordedBody(value.response)
        self.close("}")
    }

    private mutating func recordedBody(_ value: RecordedBody?) {
        guard let value else { return self.null() }
        self.open("{")
        self.key("cut"); self.bool(value.cut)
        self.key("cutBy"); self.string(value.cutBy)
        self.key("rule"); self.integer(Int64(value.rule))
        self.key("seen"); self.integer(value.seen)
        self.key("size"); self.integer(value.size)
        self.close("}")
    }
}
