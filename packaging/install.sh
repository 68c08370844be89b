#!/usr/bin/env bash
# Build nerdr, install it to ~/.local/bin, and start its systemd user sockets.
# Run as the user who will use nerdr (not root). Re-running upgrades in place.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "install.sh: cargo is not installed; install a Rust toolchain (https://rustup.rs) and run this again" >&2
    exit 1
fi

prefix="${NERDR_PREFIX:-$HOME/.local}"
cargo install --locked --path . --root "$prefix" --force
bin="$prefix/bin/nerdr"

if command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1; then
    "$bin" service install --bin "$bin"
elif [ "$(uname)" = Darwin ]; then
    "$bin" service install --bin "$bin"
else
    echo "No systemd user manager here: the first nerdr command will start the core by itself."
fi

case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "Add $prefix/bin to your PATH to run \`nerdr\`." ;;
esac
