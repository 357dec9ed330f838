# server_lib.sh - sourced (not run) by the shell client tests (redis_cli.sh,
# node_clients.sh): start the server under test on a free loopback port with
# a fresh temporary directory, in its own process group, and stop it by pid.
#
#   ATTIC_TEST_SERVER  atticdb (default) or redis: which server to start, so
#                      that every client test can first be proven on Redis
#   ATTICDB_SERVER     the atticdb-server binary (default ./atticdb-server)
#   REDIS_SERVER       the redis-server binary (default: from PATH)
#
#   srv_start [args...]   start; sets SRV_PID, SRV_PORT, SRV_DIR, SRV_LOG
#                         (returns 1 if it did not answer within 10 s)
#   srv_stop              SIGTERM, up to 10 s, then SIGKILL of its group
#   srv_ping_port PORT    0 when something answers a RESP PING there
#
# The caller installs `trap srv_stop EXIT` (srv_stop is idempotent).

SRV_PID=""
SRV_PORT=""
SRV_DIR=""
SRV_LOG=""
SRV_KIND=${ATTIC_TEST_SERVER:-atticdb}

srv_binary() {
    case "$SRV_KIND" in
    redis) echo "${REDIS_SERVER:-$(command -v redis-server || true)}" ;;
    atticdb) echo "${ATTICDB_SERVER:-${top_builddir:-.}/atticdb-server}" ;;
    *) echo "" ;;
    esac
}

# Any RESP reply to an inline PING within 1 s (+PONG, or -NOAUTH when a
# password is set) means the server is up.
srv_ping_port() {
    local reply=""
    { exec 9<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
    printf 'PING\r\n' >&9
    read -r -t 1 reply <&9
    exec 9<&- 9>&-
    case "$reply" in
    +* | -*) return 0 ;;
    *) return 1 ;;
    esac
}

srv_start() {
    local bin attempt i
    bin=$(srv_binary)
    if [ -z "$bin" ] || [ ! -x "$bin" ]; then
        echo "server_lib: no server binary for ATTIC_TEST_SERVER=$SRV_KIND ('$bin')" >&2
        return 1
    fi
    SRV_DIR=$(mktemp -d "${TMPDIR:-/tmp}/attic-client-test.XXXXXX")
    SRV_LOG="$SRV_DIR/server.log"
    mkdir -p "$SRV_DIR/data"
    for attempt in 1 2 3 4 5; do
        # A port outside the ephemeral range that nothing answers on; if
        # another process takes it first, the server exits: try another.
        SRV_PORT=$((20000 + RANDOM % 10000))
        (exec 3<>"/dev/tcp/127.0.0.1/$SRV_PORT") 2>/dev/null && continue
        if [ "$SRV_KIND" = redis ]; then
            setsid "$bin" --port "$SRV_PORT" --bind 127.0.0.1 --dir "$SRV_DIR/data" \
                --logfile "$SRV_LOG" --save '' --appendonly no --daemonize no "$@" \
                </dev/null >>"$SRV_DIR/stderr.txt" 2>&1 &
        else
            setsid "$bin" --port "$SRV_PORT" --bind 127.0.0.1 --dir "$SRV_DIR/data" \
                --logfile "$SRV_LOG" "$@" </dev/null >>"$SRV_DIR/stderr.txt" 2>&1 &
        fi
        # setsid is not a group leader here, so it execs the server in
        # place: $! is the server, and its process group id.
        SRV_PID=$!
        for i in $(seq 1 100); do
            kill -0 "$SRV_PID" 2>/dev/null || break
            if srv_ping_port "$SRV_PORT"; then return 0; fi
            sleep 0.1
        done
        srv_stop_process
    done
    echo "server_lib: $bin did not start; its output and log:" >&2
    tail -20 "$SRV_DIR/stderr.txt" "$SRV_LOG" >&2 2>/dev/null
    return 1
}

srv_stop_process() {
    local i
    [ -n "$SRV_PID" ] || return 0
    kill -TERM "$SRV_PID" 2>/dev/null
    for i in $(seq 1 100); do
        kill -0 "$SRV_PID" 2>/dev/null || break
        sleep 0.1
    done
    # Whatever is left of its process group (the group id is its pid).
    kill -KILL -- "-$SRV_PID" 2>/dev/null
    wait "$SRV_PID" 2>/dev/null
    SRV_PID=""
}

srv_stop() {
    srv_stop_process
    if [ -n "$SRV_DIR" ]; then
        rm -rf "$SRV_DIR"
        SRV_DIR=""
    fi
}
