#!/bin/bash
# shellcheck disable=SC2317 # functions run from traps and wait_for
# Private systemd user manager for nerdr's integration tests.
#
# Usage (as root):   bash tests/env/sysenv.sh [USER]
#                    unshare -m --propagation private bash tests/env/sysenv.sh [USER]
#
# Without the unshare the script re-executes itself in a new private mount
# namespace (same PID).  Inside that namespace it:
#   * mounts tmpfs on /run/systemd, /run/log, /run/user (and /var/log/journal if
#     the host has that directory), so nothing reaches the host's /run or journal;
#   * runs its own systemd-journald;
#   * makes sure USER (default: nerdrt) exists and is in group systemd-journal;
#   * creates a fresh HOME under /tmp and /run/user/$UID; inside the namespace
#     /tmp is a private tmpfs, with only this run's base directory (HOME's
#     parent) bound in at the same path as on the host;
#   * creates a delegated cgroup subtree, named like a real one so journald
#     fills in _SYSTEMD_USER_UNIT & co.:
#         <hier>/<name>/user-<uid>.slice/user@<uid>.service   the user manager
#         <hier>/<name>/user-<uid>.slice/harness.scope        commands (as-user.sh)
#     where <hier> is /sys/fs/cgroup/unified and /sys/fs/cgroup/systemd on the
#     hybrid layout (or /sys/fs/cgroup alone on a pure cgroup2 host) and
#     <name> is unique per run (nerdr_test_<pid>_<random>.slice);
#   * starts `systemd --user` as USER and waits for its bus and private socket.
# Then it prints exactly one line on stdout:
#   READY uid=<uid> gid=<gid> home=<home> runtime=<dir> cgroup=<name> pid=<pid> bin=<dir> base=<dir>
# (bin= is an empty root-owned 0755 directory the user can reach, for copies of
# binaries under test; base= holds home/, bin/ and logs), and then waits until
# its stdin reaches EOF or it gets SIGTERM/SIGINT/SIGHUP, and tears everything
# down: stops the manager, kills every PID left in the subtree (by PID, from
# cgroup.procs), removes the cgroups depth-first, stops journald and removes
# the temp directory.  Diagnostics go to stderr.
#
# Environment knobs:
#   NERDR_SYSENV_TIMEOUT   seconds to wait for each start-up step (default 30)
#   NERDR_SYSENV_LOG_LEVEL SYSTEMD_LOG_LEVEL for the user manager (default info)
#   NERDR_SYSENV_KEEP=1    keep the temp directory (for post-mortems)
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C

SELF=$(readlink -f "${BASH_SOURCE[0]}")
log() { printf 'sysenv[%s]: %s\n' "$$" "$*" >&2; }
die() {
    log "FATAL: $*"
    exit 1
}

[[ $(id -u) == 0 ]] || die "must run as root (got uid $(id -u))"

# Re-exec in a private mount namespace unless we are in one already: started
# as `unshare -m ... bash sysenv.sh` (our namespace is not our parent's), or
# re-executed here. A parent whose namespace cannot be read (PID 1 of a
# container, after `setsid`) proves nothing: we unshare then too, or the
# tmpfs below would cover /tmp for every process of the caller's namespace.
parent_ns=$(readlink /proc/$PPID/ns/mnt 2>/dev/null)
if [[ ${NERDR_SYSENV_UNSHARED:-} != "$$" &&
      ( -z $parent_ns || $(readlink /proc/self/ns/mnt) == "$parent_ns" ) ]]; then
    NERDR_SYSENV_UNSHARED=$$ exec unshare -m --propagation private bash "$SELF" "$@"
fi
unset NERDR_SYSENV_UNSHARED
# Belt and braces: nothing we mount may propagate anywhere.
mount --make-rprivate / || die "mount --make-rprivate / failed"

TEST_USER=${1:-nerdrt}
TIMEOUT=${NERDR_SYSENV_TIMEOUT:-30}
POLL=0.02
BASE=""
HOST_TMP=""
CG_NAME=""
CG_HIERS=()
JOURNALD_PID=""
MANAGER_PID=""
TORN_DOWN=0
LEAKED=0

# ---------------------------------------------------------------- teardown
cgroup_pids() {
    # Every PID in the subtree, in every hierarchy we use.
    local h
    for h in "${CG_HIERS[@]}"; do
        [[ -d $h/$CG_NAME ]] || continue
        find "$h/$CG_NAME" -name cgroup.procs -exec cat {} + 2>/dev/null
    done | sort -un
}

stop_pid() { # stop_pid PID SECONDS: SIGTERM, wait, then SIGKILL.  Only for our own children.
    local pid=$1 secs=$2 i
    [[ -n $pid ]] || return 0
    kill -TERM "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    for ((i = 0; i < secs * 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        # A zombie child still answers kill -0; reap it if it is done.
        [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && break
        sleep "$POLL"
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

teardown() {
    local rc=$? i pids h
    ((TORN_DOWN)) && return
    TORN_DOWN=1
    trap '' TERM INT HUP
    log "tearing down (exit status $rc)"
    # 1. Graceful stop of the user manager (it stops its units), bounded.
    stop_pid "$MANAGER_PID" 10
    # 2. Kill whatever is left in the subtree, by PID, until it is empty.
    if [[ -n $CG_NAME ]]; then
        for ((i = 0; i < 500; i++)); do
            pids=$(cgroup_pids)
            [[ -z $pids ]] && break
            # shellcheck disable=SC2086
            kill -KILL $pids 2>/dev/null
            sleep "$POLL"
        done
        if [[ -n $(cgroup_pids) ]]; then
            log "WARNING: processes survive in $CG_NAME: $(cgroup_pids | tr '\n' ' ')"
            LEAKED=1
        fi
        # 3. Remove the cgroups depth-first (retry: the kernel releases them lazily).
        for h in "${CG_HIERS[@]}"; do
            [[ -d $h/$CG_NAME ]] || continue
            for ((i = 0; i < 250; i++)); do
                find "$h/$CG_NAME" -depth -type d -exec rmdir {} + 2>/dev/null
                [[ -d $h/$CG_NAME ]] || break
                sleep "$POLL"
            done
            if [[ -d $h/$CG_NAME ]]; then
                log "WARNING: could not remove $h/$CG_NAME"
                LEAKED=1
            fi
        done
    fi
    # 4. journald.
    stop_pid "$JOURNALD_PID" 10
    # 5. Temp directory, through the host's /tmp (never following mounts).
    if [[ -n $BASE ]]; then
        local host_base=$BASE
        [[ -n $HOST_TMP ]] && host_base=$HOST_TMP${BASE#/tmp}
        if [[ ${NERDR_SYSENV_KEEP:-0} == 1 ]]; then
            log "keeping $BASE"
        elif [[ -d $host_base ]]; then
            rm -rf --one-file-system "$host_base"
            [[ -e $host_base ]] && log "WARNING: could not remove $BASE" && LEAKED=1
        fi
    fi
    log "teardown done"
    # The mounts vanish with the mount namespace when our last process exits.
    ((rc == 0 && LEAKED)) && exit 3
    exit "$rc"
}
trap teardown EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP
# If our caller dies, writes to its pipes must fail (EPIPE) instead of killing
# us before the teardown: the EOF on stdin then tears everything down.
# Children get the default disposition back.
trap '' PIPE

wait_for() { # wait_for WHAT COMMAND...: poll until COMMAND succeeds or TIMEOUT.
    local what=$1 i
    shift
    for ((i = 0; i < TIMEOUT * 50; i++)); do
        "$@" && return 0
        if [[ -n $MANAGER_PID ]] && ! kill -0 "$MANAGER_PID" 2>/dev/null; then
            log "systemd --user died while waiting for $what; its log:"
            cat "$BASE/manager.log" >&2
            die "systemd --user died"
        fi
        sleep "$POLL"
    done
    [[ -n $BASE && -f $BASE/manager.log ]] && { log "manager log:"; cat "$BASE/manager.log" >&2; }
    die "timed out after ${TIMEOUT}s waiting for $what"
}

# ---------------------------------------------------------------- mounts
for d in /run/systemd /run/log /run/user; do
    mkdir -p "$d" || die "mkdir $d"
    mount -t tmpfs -o mode=0755,size=64m tmpfs "$d" || die "mount tmpfs on $d failed"
done
mkdir -p /run/systemd/system /run/systemd/journal /run/systemd/journald.conf.d /run/log/journal

MACHINE_ID=$(cat /etc/machine-id 2>/dev/null) || die "no /etc/machine-id"
# Persistent journal like a stock Debian 12 box, but on a private tmpfs.
if [[ -d /var/log/journal ]]; then
    mount -t tmpfs -o mode=2755,size=128m tmpfs /var/log/journal || die "mount tmpfs on /var/log/journal failed"
    STORAGE=persistent
    JOURNAL_DIRS=(/var/log/journal /run/log/journal)
    # Skip the /run -> /var flush step: write to /var/log/journal right away.
    touch /run/systemd/journal/flushed
else
    STORAGE=volatile
    JOURNAL_DIRS=(/run/log/journal)
fi
for d in "${JOURNAL_DIRS[@]}"; do
    mkdir -p "$d/$MACHINE_ID"
    chgrp systemd-journal "$d" "$d/$MACHINE_ID" 2>/dev/null
    chmod 2755 "$d" "$d/$MACHINE_ID"
done
cat >/run/systemd/journald.conf.d/50-nerdr-test.conf <<EOF
[Journal]
Storage=$STORAGE
ReadKMsg=no
Audit=no
ForwardToSyslog=no
ForwardToWall=no
ForwardToConsole=no
ForwardToKMsg=no
RateLimitIntervalSec=0
SyncIntervalSec=1s
EOF

# ---------------------------------------------------------------- journald
(
    trap - PIPE
    exec /lib/systemd/systemd-journald
) </dev/null >/dev/null 2>&1 &
JOURNALD_PID=$!
journald_ready() {
    [[ -S /run/systemd/journal/socket && -S /run/systemd/journal/stdout ]] && return 0
    kill -0 "$JOURNALD_PID" 2>/dev/null || die "systemd-journald exited early"
    return 1
}
wait_for "journald sockets" journald_ready

# ---------------------------------------------------------------- user
LOCK=/run/lock/nerdr-sysenv-useradd.lock
[[ -d /run/lock ]] || LOCK=/tmp/nerdr-sysenv-useradd.lock
(
    flock -w "$TIMEOUT" 9 || die "could not lock $LOCK"
    if ! id -u "$TEST_USER" >/dev/null 2>&1; then
        log "creating user $TEST_USER"
        useradd -m -s /bin/bash -G systemd-journal "$TEST_USER" || die "useradd $TEST_USER failed"
    elif ! id -nG "$TEST_USER" | tr ' ' '\n' | grep -qx systemd-journal; then
        usermod -aG systemd-journal "$TEST_USER" || die "usermod -aG systemd-journal $TEST_USER failed"
    fi
) 9>>"$LOCK" || exit 1
TEST_UID=$(id -u "$TEST_USER") || die "no uid for $TEST_USER"
TEST_GID=$(id -g "$TEST_USER") || die "no gid for $TEST_USER"
[[ $TEST_UID != 0 ]] || die "test user must not be root"

# Base dir on the host: /tmp/nerdr-sysenv.XXXXXX/{home,bin,manager.log}.
BASE=$(mktemp -d /tmp/nerdr-sysenv.XXXXXX) || die "mktemp failed"
chmod 0755 "$BASE"
mkdir -m 0755 "$BASE/bin"
mkdir -m 0700 "$BASE/home"
chown "$TEST_UID:$TEST_GID" "$BASE/home"
# Inside the namespace /tmp is a private tmpfs (concurrent environments share
# the uid, so tmux, ssh-agent & co. would otherwise meet in the host's /tmp),
# with only $BASE bound back in at the same path.  The host's /tmp stays
# reachable at $HOST_TMP for the teardown.
# (Under a 0700 directory, so only root can get at the host's /tmp.)
PRIV=/run/systemd/.nerdr-sysenv
mkdir -m 0700 "$PRIV" "$PRIV/host-tmp" "$PRIV/base" || die "mkdir $PRIV failed"
mount --bind /tmp "$PRIV/host-tmp" || die "bind-mount /tmp failed"
HOST_TMP=$PRIV/host-tmp
mount --bind "$BASE" "$PRIV/base" || die "bind-mount $BASE failed"
mount -t tmpfs -o mode=1777,size=256m tmpfs /tmp || die "mount tmpfs on /tmp failed"
mkdir -m 0755 "$BASE" || die "mkdir $BASE in the private /tmp failed"
mount --move "$PRIV/base" "$BASE" || die "cannot mount $BASE in the private /tmp"
TEST_HOME=$BASE/home
RUNTIME_DIR=/run/user/$TEST_UID
mkdir -m 0700 "$RUNTIME_DIR" || die "cannot create $RUNTIME_DIR"
chown "$TEST_UID:$TEST_GID" "$RUNTIME_DIR" || die "cannot chown $RUNTIME_DIR"

# ---------------------------------------------------------------- cgroups
if [[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]]; then
    CG_HIERS=(/sys/fs/cgroup)
elif [[ $(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null) == cgroup2fs && -f /sys/fs/cgroup/systemd/cgroup.procs ]]; then
    CG_HIERS=(/sys/fs/cgroup/unified /sys/fs/cgroup/systemd)
elif [[ -f /sys/fs/cgroup/systemd/cgroup.procs ]]; then
    CG_HIERS=(/sys/fs/cgroup/systemd)
else
    die "unsupported cgroup layout under /sys/fs/cgroup"
fi
CG_NAME=nerdr_test_$$_$(od -An -N4 -tx4 /dev/urandom | tr -d ' ').slice
CG_USER=$CG_NAME/user-$TEST_UID.slice
CG_MANAGER=$CG_USER/user@$TEST_UID.service
CG_CMDS=$CG_USER/harness.scope
for h in "${CG_HIERS[@]}"; do
    mkdir -p "$h/$CG_MANAGER" "$h/$CG_CMDS" || die "cannot create cgroups in $h"
    # Delegate from user-<uid>.slice down: that is the common ancestor of the
    # commands and the manager's units, so the manager may move commands into
    # scopes (systemd-run --user --scope).
    chown -R "$TEST_UID:$TEST_GID" "$h/$CG_USER" || die "chown $h/$CG_USER failed"
done

# ---------------------------------------------------------------- manager
(
    trap - PIPE
    for h in "${CG_HIERS[@]}"; do
        echo "$BASHPID" >"$h/$CG_MANAGER/cgroup.procs" || exit 1
    done
    cd / || exit 1
    exec setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --init-groups \
        env -i HOME="$TEST_HOME" USER="$TEST_USER" LOGNAME="$TEST_USER" SHELL=/bin/bash \
        XDG_RUNTIME_DIR="$RUNTIME_DIR" LANG=C.UTF-8 \
        PATH=/usr/local/bin:/usr/bin:/bin \
        SYSTEMD_LOG_LEVEL="${NERDR_SYSENV_LOG_LEVEL:-info}" \
        /lib/systemd/systemd --user
) </dev/null >"$BASE/manager.log" 2>&1 &
MANAGER_PID=$!

as_user() {
    setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --init-groups \
        env -i HOME="$TEST_HOME" XDG_RUNTIME_DIR="$RUNTIME_DIR" PATH=/usr/bin:/bin \
        DBUS_SESSION_BUS_ADDRESS="unix:path=$RUNTIME_DIR/bus" "$@"
}
sockets_ready() { [[ -S $RUNTIME_DIR/systemd/private && -S $RUNTIME_DIR/bus ]]; }
wait_for "\$XDG_RUNTIME_DIR/bus and \$XDG_RUNTIME_DIR/systemd/private" sockets_ready
# Startup finished (default.target reached)?  "degraded" also counts.
manager_up() {
    local st
    st=$(as_user systemctl --user is-system-running 2>/dev/null)
    [[ $st == running || $st == degraded ]]
}
wait_for "systemctl --user is-system-running" manager_up

echo "READY uid=$TEST_UID gid=$TEST_GID home=$TEST_HOME runtime=$RUNTIME_DIR cgroup=$CG_NAME pid=$$ bin=$BASE/bin base=$BASE" ||
    die "cannot write the READY line (caller gone?)"

# ---------------------------------------------------------------- wait
# Until EOF on stdin.  read -t keeps the signal traps responsive.
while :; do
    IFS= read -r -t 1 _
    rc=$?
    ((rc == 0 || rc > 128)) && continue
    break
done
exit 0
