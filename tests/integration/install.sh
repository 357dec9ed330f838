#!/bin/sh
# install.sh - `make install DESTDIR=...` lays out what docs/OPERATIONS.md
# ("Installing") says: the programs in bindir, the example configuration in
# sysconfdir/atticdb, the systemd unit in the unit directory (with the
# installed paths), and the unit passes `systemd-analyze verify` where
# systemd-analyze exists. Run by make check (tests/include.am), which sets
# top_builddir, top_srcdir and the ATTIC_*DIR variables.
set -eu
: "${top_builddir:?run by make check}" "${top_srcdir:?}" "${ATTIC_BINDIR:?}" "${ATTIC_SYSCONFDIR:?}"
tmp=$(mktemp -d /tmp/attic-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! ${MAKE:-make} -s -C "$top_builddir" install DESTDIR="$tmp/root" >"$tmp/make.log" 2>&1; then
    cat "$tmp/make.log" >&2
    fail "make install DESTDIR=$tmp/root"
fi
root=$tmp/root

for prog in atticdb-server atticdb-check atticdb-bench atticdb-backup; do
    test -x "$root$ATTIC_BINDIR/$prog" || fail "$prog is not in $ATTIC_BINDIR"
done
"$root$ATTIC_BINDIR/atticdb-server" --version | grep -q '^AtticDB server v=' ||
    fail "the installed atticdb-server does not run"

conf=$root$ATTIC_SYSCONFDIR/atticdb/atticdb.conf
test -f "$conf" || fail "no atticdb.conf in $ATTIC_SYSCONFDIR/atticdb"
cmp -s "$conf" "$top_srcdir/etc/atticdb.conf" || fail "the installed atticdb.conf differs from etc/atticdb.conf"

if [ -n "${ATTIC_UNITDIR:-}" ]; then
    unit=$root$ATTIC_UNITDIR/atticdb.service
    test -f "$unit" || fail "no atticdb.service in $ATTIC_UNITDIR"
    grep -qx 'Type=notify' "$unit" || fail "the unit is not Type=notify"
    grep -qx "ExecStart=$ATTIC_BINDIR/atticdb-server $ATTIC_SYSCONFDIR/atticdb/atticdb.conf --dir /var/lib/atticdb" "$unit" ||
        fail "ExecStart does not name the installed server and configuration: $(grep ExecStart= "$unit")"
    for line in 'Restart=on-failure' 'DynamicUser=yes' 'StateDirectory=atticdb'; do
        grep -qx "$line" "$unit" || fail "the unit lacks $line"
    done
    grep -q '^LimitNOFILE=' "$unit" || fail "the unit lacks LimitNOFILE"
    if command -v systemd-analyze >/dev/null 2>&1; then
        # A copy whose ExecStart names the program under DESTDIR, so that
        # verify finds it (--root would want a whole system in the tree).
        mkdir "$tmp/unit"
        sed "s|^ExecStart=$ATTIC_BINDIR/|ExecStart=$root$ATTIC_BINDIR/|" "$unit" >"$tmp/unit/atticdb.service"
        if ! systemd-analyze verify "$tmp/unit/atticdb.service" >"$tmp/verify.log" 2>&1 ||
            grep -i 'atticdb' "$tmp/verify.log" >/dev/null; then
            cat "$tmp/verify.log" >&2
            fail "systemd-analyze verify atticdb.service"
        fi
    else
        echo "systemd-analyze not found: the unit was not verified"
    fi
fi

for doc in README.md OPERATIONS.md COMMANDS.md; do
    find "$root" -name "$doc" | grep -q . || fail "$doc is not installed"
done

# make uninstall takes back everything but the directories.
${MAKE:-make} -s -C "$top_builddir" uninstall DESTDIR="$root" >"$tmp/make.log" 2>&1 ||
    fail "make uninstall"
left=$(find "$root" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "install layout ok"
