extension Substring {
    /// Without the optional whitespace around a field value or list element (RFC 9110 §5.6.3:
    /// spaces and horizontal tabs, nothing else). For the framing and connection fields of requests
    /// and responses alike.
    package func trimmingSpaces() -> Substring {
        var view = self
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return view
    }
}
