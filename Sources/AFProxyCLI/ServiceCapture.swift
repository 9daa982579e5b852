/// A systemd service's capture as files: the service's name checked, the drop-in that makes the
/// service join the namespace `capture-hold` keeps (through `afproxy-capture@INSTANCE.service`,
/// which the drop-in requires and orders first), and where that namespace is mounted. systemd
/// joins it with `NetworkNamespacePath=`, so nothing in the service's own unit or environment
/// changes, and removing the drop-in undoes it all at the service's next start.
struct ServiceCapture: Equatable {
    /// `nginx` for nginx.service: the template's instance and the namespace's name.
    let instance: String

    var service: String { "\(self.instance).service" }
    var holdUnit: String { "afproxy-capture@\(self.instance).service" }

    static let dropInName = "afproxy-capture.conf"
    static let unitDirectory = "/etc/systemd/system"
    /// Where `ip netns` keeps its names: `ip netns exec afproxy-nginx …` works on a captured
    /// service's namespace as on one of its own.
    static let namespaceDirectory = "/run/netns"
    /// A unit name is at most 255 characters; the hold unit adds its prefix and suffix.
    static let maxInstance = 255 - "afproxy-capture@.service".utf8.count

    /// `nginx` or `nginx.service`; refused with the reason when systemd could not name it so, or
    /// when it is afproxy itself (its connections would come back to it).
    init(service: String) throws(CaptureSetupFailure) {
        let instance = service.hasSuffix(".service") ? String(service.dropLast(".service".utf8.count)) : service
        guard !instance.isEmpty else { throw CaptureSetupFailure("name the service: afproxyctl capture SERVICE") }
        if instance.contains("@") {
            throw CaptureSetupFailure(
                "\(service): an instance of a template cannot be captured yet (its name would carry a second '@')")
        }
        let allowed = instance.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || ":-_.".unicodeScalars.contains(scalar))
        }
        guard allowed, !instance.hasPrefix("-"), !instance.hasPrefix("."), instance.utf8.count <= Self.maxInstance
        else {
            throw CaptureSetupFailure(
                "\(service) is not a service's name (letters, digits, ':', '-', '_' and '.', at most \(Self.maxInstance))"
            )
        }
        guard instance != "afproxy", !instance.hasPrefix("afproxy-capture") else {
            throw CaptureSetupFailure("\(service) cannot be captured: captured connections go to afproxy")
        }
        self.instance = instance
    }

    func namespacePath(in directory: String = Self.namespaceDirectory) -> String {
        "\(directory)/afproxy-\(self.instance)"
    }

    func dropInDirectory(in unitDirectory: String = Self.unitDirectory) -> String {
        "\(unitDirectory)/\(self.service).d"
    }

    func dropInPath(in unitDirectory: String = Self.unitDirectory) -> String {
        "\(self.dropInDirectory(in: unitDirectory))/\(Self.dropInName)"
    }

    /// The drop-in: Requires= (not Wants=) so that the service does not start outside the
    /// capture when the namespace cannot be made; systemd refuses to start it then, and says why.
    var dropIn: String {
        """
        # Written by `afproxyctl capture \(self.service)`: the service's connections go through afproxy,
        # from its next start (docs/capture.md). `afproxyctl capture --remove \(self.service)` undoes it.
        [Unit]
        Requires=\(self.holdUnit)
        After=\(self.holdUnit)

        [Service]
        NetworkNamespacePath=\(self.namespacePath())

        """
    }

    /// The services a drop-in of ours names in `unitDirectory`, sorted.
    static func captured(in entries: [String], hasDropIn: (String) -> Bool) -> [ServiceCapture] {
        entries.filter { $0.hasSuffix(".service.d") }.sorted().compactMap { entry in
            let service = String(entry.dropLast(2))
            guard hasDropIn(entry), let capture = try? ServiceCapture(service: service) else { return nil }
            return capture
        }
    }
}
