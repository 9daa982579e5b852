import AFProxyModel

extension JSONWriter {
    /// A task's `edits`, in order.
    mutating func edits(_ value: [TaskEdit]) {
        self.open("[")
        for (index, edit) in value.enumerated() {
            if index > 0 { self.out.append(UInt8(ascii: ",")) }
            self.open("{")
            self.key("change"); self.string(edit.change)
            self.key("side"); self.string(edit.side.rawValue)
            self.close("}")
        }
        self.close("]")
    }
}
