-- wrk script for bench/run: one keep-alive GET, repeated.
--
-- BENCH_PATH  request target. "/1k" for the direct run, or the absolute URL
--             "http://127.0.0.1:ORIGIN/1k" for proxies, so the request line
--             is absolute-form as a forward proxy expects.
-- BENCH_HOST  optional Host header. For proxies it must name the origin, not
--             the proxy (wrk would otherwise send the proxy's host:port).
--
-- done() prints one machine-readable line that bench/run parses, so it does
-- not depend on wrk's human-oriented output (units switch between us/ms/s).

local path = os.getenv("BENCH_PATH") or "/1k"
local host = os.getenv("BENCH_HOST")

wrk.method = "GET"
wrk.path = path
if host and host ~= "" then
  wrk.headers["Host"] = host
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH requests=%d duration_us=%d non2xx=%d connect=%d read=%d write=%d timeout=%d p50_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
