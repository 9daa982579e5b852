# bench/lib.sh — shell shared by bench/run, bench/slow_clients and bench/soak. Sourced, not run.
# shellcheck shell=bash
#
# It provides logging, owned background processes with cleanup on exit or Ctrl-C, tool install
# (apt), the fd limit, a temp dir on tmpfs, free ports, config templates, and starting the nginx
# origin and each proxy on 127.0.0.1. The caller sets LOG_TAG (the prefix of its log lines) and
# then installs the traps with `install_traps`.
#
# Shared state (global):
#   PID[target]   pid of a started daemon         PORT[name]  a listen port (pick_ports)
#   NOTE[target]  why figures are missing          TMP         the temp dir (make_tmp)
#   STARTED_PIDS  every daemon we own, in start order (cleanup stops them in reverse)

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck disable=SC2034  # read by the scripts that source this file
RESULTS_DIR=$BENCH_DIR/results
LOG_TAG=${LOG_TAG:-bench}
ONE_KIB=1024

# System daemons live in sbin; proxy variables in the environment would send
# the "direct" curl runs through some other proxy.
export PATH="$PATH:/usr/sbin:/sbin"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

declare -a STARTED_PIDS=()   # every background process we own, in start order
declare -A PID=()            # target -> proxy pid
declare -A PORT=()           # target/origin -> listen port
declare -A NOTE=()           # target -> why figures are missing or suspicious
TMP=""
EXTRA_TMP=()                 # more temp dirs to remove on exit (e.g. one on another file system)
FG_PID=""                    # client being waited for (see run_waited)

log()  { printf '[%s %s] %s\n' "$LOG_TAG" "$(date +%T)" "$*" >&2; }
warn() { log "WARNING: $*"; }
die()  { log "ERROR: $*"; exit 1; }
note() { NOTE[$1]="${NOTE[$1]:+${NOTE[$1]}; }$2"; }

# ---------------------------------------------------------------- cleanup --

# A process counts as gone once it has exited, even if not yet reaped
# (a zombie still answers `kill -0`).
is_running() {
    local state
    state=$(awk '{sub(/.*\) /, ""); print $1}' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $state && $state != Z ]]
}

descendants() {
    local kid
    for kid in $(pgrep -P "$1" 2>/dev/null); do
        echo "$kid"
        descendants "$kid"
    done
}

# SIGTERM, up to 5 s grace, then SIGKILL for the process and anything it
# forked (nginx workers would outlive a SIGKILLed master).
stop_process() {
    local pid=$1 tree p i
    is_running "$pid" || { wait "$pid" 2>/dev/null; return 0; }
    tree="$pid $(descendants "$pid")"
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
        local left=0
        for p in $tree; do is_running "$p" && left=1; done
        ((left)) || break
        sleep 0.1
    done
    for p in $tree; do is_running "$p" && kill -KILL "$p" 2>/dev/null; done
    wait "$pid" 2>/dev/null
    return 0
}

# Stop one started daemon now and forget it, so cleanup never signals its
# pid again (the number may belong to someone else by then).
stop_owned() {
    local pid=$1 i
    stop_process "$pid"
    for i in "${!STARTED_PIDS[@]}"; do
        [[ ${STARTED_PIDS[i]} == "$pid" ]] && unset "STARTED_PIDS[i]"
    done
    STARTED_PIDS=("${STARTED_PIDS[@]}")
}

cleanup() {
    local status=$? i
    trap - EXIT INT TERM
    [[ -n $FG_PID ]] && stop_process "$FG_PID"
    # Stop in reverse start order: samplers and proxies before the origin.
    for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
        stop_process "${STARTED_PIDS[i]}"
    done
    for i in "$TMP" "${EXTRA_TMP[@]}"; do
        [[ -n $i && -d $i ]] || continue
        if [[ ${BENCH_KEEP_TMP:-0} == 1 ]]; then
            log "kept temp dir $i"
        else
            rm -rf "$i"
        fi
    done
    exit "$status"
}

install_traps() {
    trap cleanup EXIT
    trap 'log "interrupted"; exit 130' INT
    trap 'log "terminated"; exit 143' TERM
}

# Start a daemon in the background, remember it for cleanup, set BG_PID.
# setsid puts it in its own session, so a Ctrl-C in the terminal reaches only
# this script and its clients; the daemons are stopped by cleanup, in order.
# (A background child of a non-interactive shell is never a group leader, so
# setsid does not fork and $! is the daemon's own pid.)
spawn() {
    setsid "$@" &
    BG_PID=$!
    STARTED_PIDS+=("$BG_PID")
}

# run_waited OUT CMD...: run a client to completion, output to file OUT.
# Backgrounded and waited for, because wrk catches SIGINT and exits 0, and
# bash then ignores a Ctrl-C that arrived during a foreground command; `wait`
# instead returns at once and the trap runs. (OUT is redirected here, not
# around the call, so the trap's own messages still reach the terminal.)
run_waited() {
    local out=$1 rc
    shift
    "$@" >"$out" 2>&1 &
    FG_PID=$!
    wait "$FG_PID"
    rc=$?
    FG_PID=""
    return "$rc"
}

# ------------------------------------------------------------------ setup --

# ensure_tools CMD...: install what is missing of the given commands with apt.
ensure_tools() {
    local -A pkg_for=([nginx]=nginx-light [squid]=squid [tinyproxy]=tinyproxy [haproxy]=haproxy
                      [wrk]=wrk [curl]=curl [python3]=python3 [pgrep]=procps [openssl]=openssl
                      [perf]=linux-perf [cc]=gcc)
    local missing=() cmd
    for cmd in "$@"; do
        command -v "$cmd" >/dev/null || missing+=("${pkg_for[$cmd]:-$cmd}")
    done
    ((${#missing[@]})) || return 0
    log "installing missing packages: ${missing[*]}"
    [[ $(id -u) == 0 ]] || die "need root to apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" \
        || die "apt-get install ${missing[*]} failed"
}

# raise_nofile NEEDED: thousands of client connections, plus the proxy's
# upstream connections, need far more than the usual 1024 descriptors.
# Children (proxies, wrk, python) inherit the limit.
raise_nofile() {
    local needed=${1:-4096} n
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
    n=$(ulimit -n)
    ((n >= needed)) || warn "ulimit -n is only $n (want $needed); the many-connection tests may fail"
    log "ulimit -n = $n"
}

# make_tmp FREE_KIB: the temp dir with the config/log dirs, the 1 KiB file
# and the origin's TLS certificate. Data files go on tmpfs when it has
# FREE_KIB to spare, so the origin and the upload sink never wait for the
# disk (that would hide proxy overhead).
make_tmp() {
    local want_kib=$1 base=/tmp free_kib
    free_kib=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
    if [[ -w /dev/shm && ${free_kib:-0} -gt $want_kib ]]; then base=/dev/shm; fi
    TMP=$(mktemp -d "$base/afproxy-bench.XXXXXX") || die "mktemp failed"
    chmod 755 "$TMP"   # squid and tinyproxy drop to unprivileged users
    mkdir -p "$TMP"/{www,uploads,logs,tls,nginx/body,squid,tinyproxy,haproxy,afproxy}
    # nginx workers run unprivileged when started as root; PUT must create files here.
    mkdir -p "$TMP/uploads/upload" && chmod 1777 "$TMP/uploads/upload"
    log "temp dir $TMP"

    head -c "$ONE_KIB" /dev/urandom >"$TMP/www/1k"
    # The HTTPS origin's certificate, which curl trusts with --cacert.
    timeout 60 openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$TMP/tls/key.pem" -out "$TMP/tls/cert.pem" -days 2 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 >"$TMP/logs/openssl.log" 2>&1 \
        || die "cannot make the TLS certificate (see logs/openssl.log)"
    chmod 644 "$TMP/tls/key.pem"   # read by nginx's unprivileged worker
}

# make_file PATH BYTES: a data file of that size. Content does not matter,
# only size: zeros are instant to create.
make_file() {
    fallocate -l "$2" "$1" 2>/dev/null \
        || dd if=/dev/zero of="$1" bs=1M count=$(($2 >> 20)) status=none \
        || die "cannot create $1 ($2 bytes)"
}

# make_random_file PATH BYTES [SEED]: a file of that size whose bytes differ everywhere (AES-CTR
# of zeros keyed by SEED), for checks that must notice bytes out of place: a SHA-256 of zeros
# would pass a file whose pieces were joined at the wrong offsets. About 300 MiB/s.
make_random_file() {
    openssl enc -aes-128-ctr -nosalt -pbkdf2 -pass "pass:afproxy-bench-${3:-1}" </dev/zero 2>/dev/null \
        | head -c "$2" >"$1"
    [[ $(stat -c %s "$1" 2>/dev/null) == "$2" ]] || die "cannot create $1 ($2 bytes)"
}

# number_fields LINE KEY...: sets each variable KEY (which the caller declares
# local) to the number in the word KEY=NUMBER of LINE, a tool's one-line
# result such as wrk's "BENCH requests=... p99_us=...". The line is parsed,
# never run, and a value must be a plain decimal number, sign and fraction
# allowed (bash arithmetic would evaluate one such as a[$(cmd)]); a missing
# or other value fails.
number_fields() {
    local _nf_line=$1 _nf_words _nf_word _nf_key _nf_value
    read -r -a _nf_words <<<"$_nf_line"
    shift
    for _nf_key in "$@"; do
        _nf_value=""
        for _nf_word in "${_nf_words[@]}"; do
            [[ $_nf_word == "$_nf_key="* ]] && _nf_value=${_nf_word#*=}
        done
        if [[ ! $_nf_value =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then
            warn "no number for $_nf_key in: $_nf_line"
            return 1
        fi
        printf -v "$_nf_key" '%s' "$_nf_value"
    done
}

# pick_ports NAME...: free ports from the kernel into PORT[NAME], all held
# open together so they are distinct.
pick_ports() {
    local ports names=("$@") i
    ports=$(python3 - "${#names[@]}" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
    ) || die "cannot pick free ports"
    read -r -a ports <<<"$ports"
    for i in "${!names[@]}"; do PORT[${names[i]}]=${ports[i]}; done
}

# render TEMPLATE PORT OUT. ORIGIN_LISTEN_OPTS (e.g. " sndbuf=64k") is added to
# the origin's listen lines.
render() {
    sed -e "s|@DIR@|$TMP|g" -e "s|@PORT@|$2|g" -e "s|@TLSPORT@|${PORT[tls]:-}|g" \
        -e "s|@ORIGINPORT@|${PORT[origin]:-}|g" -e "s|@RELAYPORT@|${PORT[relay]:-}|g" \
        -e "s|@LISTENOPTS@|${ORIGIN_LISTEN_OPTS:-}|g" "$BENCH_DIR/$1" >"$3"
}

# Wait until PID accepts connections on PORT (or dies, or TIMEOUT s pass).
wait_port() {
    local port=$1 pid=$2 timeout=${3:-20} i
    for ((i = 0; i < timeout * 10; i++)); do
        is_running "$pid" || return 1
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# The nginx origin: plain HTTP on PORT[origin], HTTPS on PORT[tls].
start_origin() {
    local conf=$TMP/nginx/nginx.conf
    render nginx.conf.tmpl "${PORT[origin]}" "$conf"
    nginx -t -q -e "$TMP/nginx/error.log" -c "$conf" >"$TMP/logs/nginx-t.log" 2>&1 \
        || { cat "$TMP/logs/nginx-t.log" >&2; die "nginx config rejected"; }
    spawn nginx -e "$TMP/nginx/error.log" -c "$conf" >"$TMP/logs/nginx.out" 2>&1
    PID[origin]=$BG_PID
    wait_port "${PORT[origin]}" "$BG_PID" || { cat "$TMP/nginx/error.log" >&2; die "nginx did not start"; }
    local got
    got=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code} %{size_download}' "http://127.0.0.1:${PORT[origin]}/1k")
    [[ $got == "200 $ONE_KIB" ]] || die "origin sanity GET /1k gave '$got'"
    got=$(curl -s --noproxy '*' --cacert "$TMP/tls/cert.pem" -o /dev/null -w '%{http_code} %{size_download}' \
        "https://127.0.0.1:${PORT[tls]}/1k")
    [[ $got == "200 $ONE_KIB" ]] || die "origin sanity GET https://…/1k gave '$got'"
    log "origin nginx on 127.0.0.1:${PORT[origin]}, HTTPS on ${PORT[tls]} (pid $BG_PID)"
}

start_squid() {
    local conf=$TMP/squid/squid.conf
    render squid.conf.tmpl "${PORT[squid]}" "$conf"
    chown -R proxy: "$TMP/squid" 2>/dev/null   # squid writes its logs as user proxy
    squid -k parse -f "$conf" >"$TMP/logs/squid-parse.log" 2>&1 \
        || { tail -20 "$TMP/logs/squid-parse.log" >&2; note squid "config rejected"; return 1; }
    # -N: foreground, no master/kid fork; the pid we get is the proxy itself.
    spawn squid -N -f "$conf" >"$TMP/logs/squid.out" 2>&1
    PID[squid]=$BG_PID
    wait_port "${PORT[squid]}" "$BG_PID" 30 \
        || { tail -20 "$TMP/squid/cache.log" >&2; note squid "did not start"; return 1; }
}

start_tinyproxy() {
    local conf=$TMP/tinyproxy/tinyproxy.conf
    render tinyproxy.conf.tmpl "${PORT[tinyproxy]}" "$conf"
    chown -R nobody: "$TMP/tinyproxy" 2>/dev/null
    spawn tinyproxy -d -c "$conf" >"$TMP/logs/tinyproxy.out" 2>&1
    PID[tinyproxy]=$BG_PID
    wait_port "${PORT[tinyproxy]}" "$BG_PID" \
        || { tail -20 "$TMP/tinyproxy/tinyproxy.log" >&2; note tinyproxy "did not start"; return 1; }
}

start_haproxy() {
    local conf=$TMP/haproxy/haproxy.cfg
    render haproxy.cfg.tmpl "${PORT[haproxy]}" "$conf"
    haproxy -c -q -f "$conf" >"$TMP/logs/haproxy-check.log" 2>&1 \
        || { tail -20 "$TMP/logs/haproxy-check.log" >&2; note haproxy "config rejected"; return 1; }
    # -db: foreground, no daemon fork; the pid we get is the proxy itself.
    spawn haproxy -db -f "$conf" >"$TMP/logs/haproxy.out" 2>&1
    PID[haproxy]=$BG_PID
    note haproxy "reference, not a forward proxy: relays every request to the origin; its TLS figure is a TCP relay to the HTTPS origin, not a CONNECT tunnel"
    wait_port "${PORT[haproxy]}" "$BG_PID" \
        || { tail -20 "$TMP/logs/haproxy.out" >&2; note haproxy "did not start"; return 1; }
}

# Release build unless AFPROXY_BIN names a binary; sets AFPROXY_PATH. Any
# failure only marks the afproxy row "n/a" so the other rows are still produced.
afproxy_binary() {
    if [[ -n ${AFPROXY_BIN:-} ]]; then
        [[ -x $AFPROXY_BIN ]] || { note afproxy "AFPROXY_BIN=$AFPROXY_BIN is not an executable file"; return 1; }
        AFPROXY_PATH=$AFPROXY_BIN
        return 0
    fi
    command -v swift >/dev/null || { note afproxy "swift not found, cannot build"; return 1; }
    log "building afproxy (swift build -c release --product afproxy)"
    if ! (cd "$REPO_ROOT" && swift build -c release --product afproxy) >"$TMP/logs/swift-build.log" 2>&1; then
        tail -30 "$TMP/logs/swift-build.log" >&2
        note afproxy "release build failed (see logs/swift-build.log)"
        return 1
    fi
    AFPROXY_PATH=$REPO_ROOT/.build/release/afproxy
    [[ -x $AFPROXY_PATH ]] || { note afproxy "build produced no $AFPROXY_PATH"; return 1; }
}

# start_afproxy_bin TARGET BINARY [FLAG...]: afproxy on PORT[TARGET], its
# control socket, logs and state in $TMP/TARGET (so two builds can run side by
# side). CONNECT may reach the HTTPS origin's port.
start_afproxy_bin() {
    local t=$1 bin=$2 dir=$TMP/$1 i
    shift 2
    local log=$dir/stderr.log connect=()
    mkdir -p "$dir"
    [[ -n ${PORT[tls]:-} ]] && connect=(--allow-connect-port "${PORT[tls]}")
    # XDG_STATE_HOME: the state directory (download queue, rules) stays in the temp dir.
    spawn env XDG_STATE_HOME="$dir/state" "$bin" --listen "127.0.0.1:${PORT[$t]}" "${connect[@]}" \
        --control-socket "$dir/control.sock" "$@" 2>"$log" >"$dir/stdout.log"
    # shellcheck disable=SC2034  # PID is read by the scripts that source this file
    PID[$t]=$BG_PID
    # Ready means the announced line, not just an open port.
    for ((i = 0; i < 300; i++)); do
        grep -q "listening on 127.0.0.1:${PORT[$t]}" "$log" 2>/dev/null && return 0
        is_running "$BG_PID" || break
        sleep 0.1
    done
    tail -20 "$log" >&2
    if is_running "$BG_PID"; then note "$t" "no 'listening on' line within 30 s"
    else note "$t" "exited during startup"; fi
    return 1
}

start_afproxy() {
    afproxy_binary || return 1
    start_afproxy_bin afproxy "$AFPROXY_PATH"
}
