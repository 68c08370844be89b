#!/bin/bash
# Run a command inside a tests/env/sysenv.sh environment.  Run as root, inside
# the environment's mount namespace:
#
#   nsenter -t <sysenv pid> -m --wd=. -- bash tests/env/as-user.sh \
#       <cgroup-name> <uid> <home> <runtime> [VAR=value ...] -- CMD [ARGS...]
#   nsenter -t <sysenv pid> -m --wd=. -- bash tests/env/as-user.sh \
#       --root [VAR=value ...] -- CMD [ARGS...]
#
# User mode moves this process into <cgroup>/user-<uid>.slice/harness.scope
# (every cgroup hierarchy sysenv.sh used), which is inside the subtree delegated
# to the user, so the user manager may move the command into scopes
# (`systemd-run --user --scope`).  Then it execs CMD as the user with a clean
# environment:
#   HOME USER LOGNAME SHELL LANG=C.UTF-8 XDG_RUNTIME_DIR
#   DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus
#   PATH=$NERDR_TEST_PATH_PREFIX:/usr/local/bin:/usr/bin:/bin
# plus, in this order (later wins):
#   * if NERDR_AS_USER_PASS_ENV=1 is set in our environment, every other variable
#     of our initial environment (this is how the Rust harness forwards
#     Command::env(); it starts nsenter with an otherwise empty environment),
#     except NERDR_AS_USER_PASS_ENV and NERDR_TEST_PATH_PREFIX themselves;
#   * the VAR=value arguments given before `--`.
#
# Root mode runs CMD as root (no cgroup move) with PATH=/usr/sbin:/usr/bin:/sbin:/bin,
# HOME=/root, LANG=C.UTF-8 and the same pass-through rules; e.g. to read the
# journal with journalctl.
#
# The working directory is whatever nsenter gives us: with `--wd=.` it is the
# caller's working directory.
set -uo pipefail
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() {
    printf 'as-user.sh: %s\n' "$*" >&2
    exit 125
}
usage() { die "usage: as-user.sh (<cgroup> <uid> <home> <runtime> | --root) [VAR=value ...] -- CMD [ARGS...]"; }

[[ $(id -u) == 0 ]] || die "must run as root"

# Our initial environment (what nsenter passed us), NUL-separated.
passed=()
prefix=""
pass_all=0
while IFS= read -r -d '' kv; do
    case $kv in
    NERDR_AS_USER_PASS_ENV=1) pass_all=1 ;;
    NERDR_AS_USER_PASS_ENV=*) ;;
    NERDR_TEST_PATH_PREFIX=*) prefix=${kv#*=} ;;
    *) passed+=("$kv") ;;
    esac
done </proc/$$/environ
((pass_all)) || passed=()

mode=user
if [[ ${1:-} == --root ]]; then
    mode=root
    shift
else
    (($# >= 4)) || usage
    cg_name=$1 uid=$2 home=$3 runtime=$4
    shift 4
fi

extra=()
while (($#)) && [[ $1 != -- ]]; do
    [[ $1 == [A-Za-z_]*=* ]] || die "expected VAR=value or --, got '$1'"
    extra+=("$1")
    shift
done
[[ ${1:-} == -- ]] || usage
shift
(($#)) || usage

if [[ $mode == root ]]; then
    exec env -i HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 \
        PATH="${prefix:+$prefix:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        "${passed[@]}" "${extra[@]}" "$@"
fi

[[ $uid =~ ^[0-9]+$ && $uid != 0 ]] || die "bad uid '$uid'"
user=$(getent passwd "$uid" | cut -d: -f1)
gid=$(getent passwd "$uid" | cut -d: -f4)
[[ -n $user && -n $gid ]] || die "no passwd entry for uid $uid"

# Same hierarchy choice as sysenv.sh.
if [[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]]; then
    hiers=(/sys/fs/cgroup)
elif [[ $(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null) == cgroup2fs && -f /sys/fs/cgroup/systemd/cgroup.procs ]]; then
    hiers=(/sys/fs/cgroup/unified /sys/fs/cgroup/systemd)
else
    hiers=(/sys/fs/cgroup/systemd)
fi
for h in "${hiers[@]}"; do
    scope=$h/$cg_name/user-$uid.slice/harness.scope
    [[ -d $scope ]] || die "no cgroup $scope (environment gone?)"
    echo $$ >"$scope/cgroup.procs" || die "cannot move into $scope"
done

exec setpriv --reuid="$uid" --regid="$gid" --init-groups \
    env -i HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash LANG=C.UTF-8 \
    XDG_RUNTIME_DIR="$runtime" DBUS_SESSION_BUS_ADDRESS="unix:path=$runtime/bus" \
    PATH="${prefix:+$prefix:}/usr/local/bin:/usr/bin:/bin" \
    "${passed[@]}" "${extra[@]}" "$@"
