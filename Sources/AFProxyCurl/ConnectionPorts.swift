/// The local and remote TCP ports of an upstream connection: how curl names the connection a
/// transfer took (its prerequest callback) and the one a finished transfer used (`getinfo`),
/// matched against the idle connections the socket watcher holds.
struct ConnectionPorts: Hashable {
    var local: Int32
    var remote: Int32
}
