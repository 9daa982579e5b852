/// Why a rule cannot be added as asked: a body that is not the JSON object the kind takes, or
/// one whose values the kind refuses (a bad pattern, no condition). The control API answers it
/// with 400 and the message, which afproxyctl prints as it is; so the message says what was
/// expected, not only what was wrong.
package struct RuleRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) { self.message = message }

    /// A body that did not decode: the message names the keys the kind takes, since a person
    /// who sent the wrong shape needs the right one more than the decoder's complaint.
    package static func expected(fields: [String]) -> RuleRequestError {
        RuleRequestError("expected a JSON object {" + fields.map { #""\#($0)": …"# }.joined(separator: ", ") + "}")
    }

    /// Keys the kind does not take, refused rather than ignored: a misspelt condition would
    /// otherwise leave a rule that matches more than it was meant to.
    package static func unknown(fields: [String], kind: String, takes: [String]) -> RuleRequestError {
        let names = fields.sorted().joined(separator: ", ")
        return RuleRequestError(
            "unknown field\(fields.count == 1 ? "" : "s") \(names): \(kind) rules take "
                + takes.joined(separator: ", "))
    }

    package var description: String { self.message }
}
