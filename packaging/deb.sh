#!/usr/bin/env bash
# Builds nerdr's .deb with cargo-deb (`cargo install cargo-deb --locked`):
# the binary, then the units, completions and man pages it writes of itself
# into target/packaging/ (the assets in Cargo.toml's [package.metadata.deb]),
# then the package. Prints the .deb's path on its last line.
#
#   packaging/deb.sh                    release build, into target/debian/
#   packaging/deb.sh --profile dev --no-build --fast -o DIR
#                                       the debug binary already built (tests)
#
# Arguments are passed to `cargo deb`; --profile and --no-build are read here too.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
build=1
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
        --profile) profile="${args[i + 1]}" ;;
        --profile=*) profile="${args[i]#--profile=}" ;;
        --no-build) build=0 ;;
    esac
done
case "$profile" in
    dev) out=debug ;;
    *) out="$profile" ;;
esac

if ! command -v cargo-deb >/dev/null 2>&1; then
    echo "deb.sh: cargo-deb is not installed; run \`cargo install cargo-deb --locked\`" >&2
    exit 1
fi
if [ "$build" = 1 ]; then
    cargo build --locked --profile "$profile"
fi
target="${CARGO_TARGET_DIR:-target}"
bin="$target/$out/nerdr"
[ -x "$bin" ] || { echo "deb.sh: $bin is not built" >&2; exit 1; }

packaging/generate.sh "$bin" target/packaging
if [ "$build" = 1 ]; then
    args+=(--no-build)
fi
cargo deb "${args[@]}" | tail -n 1
