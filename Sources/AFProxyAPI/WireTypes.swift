/// The values of the task model and of the rules that travel over the control socket, re-exported
/// one by one: afproxyctl imports this module only, and sees exactly these of the modules below
/// it, so the wire is this list and a type the daemon keeps to itself cannot leak into the CLI.
/// swift-nio's umbrella module re-exports its parts the same way, whole modules there.
///
/// The task model's: a task, its events and the daemon's counts, as `/v1/tasks`, `/v1/events`,
/// `/v1/stats` and `/v1/status` carry them.
@_exported import enum AFProxyModel.AFProxyVersion
// Recorded bodies (`afproxyctl record`, `afproxyctl body`): the rule as `/v1/rules/records` lists
// it, what `POST` takes, and what a task's record says of its bodies.
@_exported import enum AFProxyModel.BodySide
@_exported import struct AFProxyModel.ByteRate
@_exported import struct AFProxyModel.CaptureLabel
@_exported import struct AFProxyModel.ClientProcess
@_exported import struct AFProxyModel.HTTPHeaderField
@_exported import struct AFProxyModel.MissedEvents
@_exported import struct AFProxyModel.NetworkEvent
@_exported import struct AFProxyModel.Reachability
@_exported import enum AFProxyModel.ReadRights
@_exported import struct AFProxyModel.RecordedBodies
@_exported import struct AFProxyModel.RecordedBody
@_exported import struct AFProxyModel.SessionStats
@_exported import enum AFProxyModel.StreamEvent
@_exported import struct AFProxyModel.TaskEdit
@_exported import struct AFProxyModel.TaskEvent
@_exported import enum AFProxyModel.TaskKind
@_exported import struct AFProxyModel.TaskLimit
@_exported import struct AFProxyModel.TaskRecord
@_exported import enum AFProxyModel.TaskState
@_exported import struct AFProxyModel.TransferProgress
// The rules', as `/v1/holds`, `/v1/throttle` and `/v1/intercept` carry them and as afproxyctl checks its
// arguments before it sends them (a host pattern, a pin, hold conditions). `/v1/rules` needs none of
// them: `afproxyctl rules` reads any kind's JSON as it comes.
@_exported import struct AFProxyRules.HoldConditions
@_exported import struct AFProxyRules.HoldRequestBody
@_exported import struct AFProxyRules.HoldRule
@_exported import struct AFProxyRules.HoldRuleError
@_exported import struct AFProxyRules.HostPattern
@_exported import struct AFProxyRules.HostPatternError
@_exported import struct AFProxyRules.InterceptPassthrough
@_exported import struct AFProxyRules.PinError
@_exported import struct AFProxyRules.PinSet
@_exported import struct AFProxyRules.RecordRequestBody
@_exported import struct AFProxyRules.RecordRule
@_exported import enum AFProxyRules.ThrottleDirection
@_exported import struct AFProxyRules.ThrottleRule
@_exported import enum AFProxyRules.ThrottleScope
