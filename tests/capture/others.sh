#!/usr/bin/env bash
# Screen captures of the agents besides claude and codex, for the fixtures
# in tests/fixtures/screens/<agent>/ and the rules in src/detect/rules/.
#
# Each agent runs in a private tmux server at 120x40 with a temporary HOME
# and XDG dirs (never the real user's), from the CLIs installed under
# $NERDR_EXTRA_AGENTS (default /opt/nerdr-agents-extra: `npm install
# --prefix` there, python venv in venv/). The fake model is the project's
# own (tests/support/fake_model*), served by an ignored test.
#
#   others.sh model-start          # start the fake model; prints its URL
#   others.sh start AGENT -- CMD   # run CMD in AGENT's tmux (env: $HOME, $MODEL_URL)
#   others.sh keys AGENT KEYS...   # tmux send-keys
#   others.sh type AGENT TEXT      # literal text (no Enter)
#   others.sh snap AGENT NAME      # capture-pane -p + title into raw/AGENT/NAME.txt
#   others.sh stop AGENT           # kill AGENT's tmux server
#   others.sh fixture AGENT NAME EXPECT RULE SOURCE  # raw/AGENT/NAME.txt -> fixture file
#   others.sh model-stop
set -euo pipefail

DIR=${NERDR_CAPTURE_DIR:-/tmp/nerdr-capture-others}
EXTRA=${NERDR_EXTRA_AGENTS:-/opt/nerdr-agents-extra}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$DIR"
export NERDR_CAPTURE_DIR=$DIR

sock() { echo "$DIR/tmux-$1.sock"; }
t() { local a=$1; shift; tmux -S "$(sock "$a")" "$@"; }

case ${1:-} in
model-start)
    rm -f "$DIR/model.url"
    (cd "$REPO" && cargo test --test all serve_the_fake_model_for_captures -- --ignored \
        >"$DIR/model.out" 2>&1 &)
    for _ in $(seq 300); do [ -s "$DIR/model.url" ] && break; sleep 0.2; done
    cat "$DIR/model.url"; echo
    ;;
model-stop) rm -f "$DIR/model.url" ;;
start)
    a=$2; shift 3
    home=$DIR/home-$a
    rm -rf "$home" "$DIR/work-$a"
    mkdir -p "$home"/{.config,.cache,.local/share,.local/state} "$DIR/work-$a" "$DIR/raw/$a"
    git -C "$DIR/work-$a" init -q 2>/dev/null || true
    url=$(cat "$DIR/model.url" 2>/dev/null || true)
    t "$a" -f /dev/null new-session -d -x 120 -y 40 -c "$DIR/work-$a" \
        env -i HOME="$home" USER=nerdrcap TERM=xterm-256color LANG=C.UTF-8 \
        XDG_CONFIG_HOME="$home/.config" XDG_CACHE_HOME="$home/.cache" \
        XDG_DATA_HOME="$home/.local/share" XDG_STATE_HOME="$home/.local/state" \
        PATH="$EXTRA/node_modules/.bin:$EXTRA/venv/bin:/usr/local/bin:/usr/bin:/bin" \
        MODEL_URL="$url" NO_UPDATE_NOTIFIER=1 DISABLE_AUTOUPDATER=1 \
        ${CAPTURE_ENV:-} bash -c "$*; echo EXITED=\$?; sleep 3600"
    t "$a" set -g status off 2>/dev/null || true
    ;;
keys) a=$2; shift 2; t "$a" send-keys "$@" ;;
type) t "$2" send-keys -l "$3" ;;
snap)
    a=$2; n=$3; mkdir -p "$DIR/raw/$a"
    { echo "title: $(t "$a" display -p '#{pane_title}')"; echo ---;
      t "$a" capture-pane -p | sed 's/[[:space:]]*$//'; } >"$DIR/raw/$a/$n.txt"
    cat "$DIR/raw/$a/$n.txt"
    ;;
stop) t "$2" kill-server 2>/dev/null || true ;;
fixture)
    a=$2 n=$3 expect=$4 rule=$5 source=$6
    out=$REPO/tests/fixtures/screens/$a/$expect-$n.screen
    mkdir -p "$(dirname "$out")"
    raw=$DIR/raw/$a/$n.txt
    {
        echo "agent: $a"
        echo "expect: $expect"
        [ -n "$rule" ] && echo "rule: $rule"
        head -1 "$raw"
        echo "source: $source"
        echo ---
        # the rows, without the blank rows at the bottom
        tail -n +3 "$raw" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
    } >"$out"
    echo "$out"
    ;;
*) sed -n '2,20p' "$0"; exit 2 ;;
esac
