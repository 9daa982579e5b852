import AFProxyModel

extension JSONWriter {
    /// `clientProcess`, keys sorted as the encoder sorts them.
    mutating func clientProcess(_ value: ClientProcess?) {
        guard let value else { return self.null() }
        self.open("{")
        self.key("capture")
        if let capture = value.capture {
            self.open("{")
            self.key("id"); self.integer(Int64(capture.id))
            self.key("name"); self.string(capture.name)
            self.close("}")
        } else {
            self.null()
        }
        self.key("commandLine"); self.string(value.commandLine)
        self.key("executable"); self.string(value.executable)
        self.key("pid"); self.integer(value.pid.map(Int64.init))
        self.key("uid"); self.integer(value.uid.map(Int64.init))
        self.key("unit"); self.string(value.unit)
        self.key("user"); self.string(value.user)
        self.close("}")
    }
}
