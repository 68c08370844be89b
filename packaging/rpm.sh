#!/usr/bin/env bash
# Builds nerdr's RPM with cargo-generate-rpm (`cargo install
# cargo-generate-rpm --locked`), with the .deb's layout: the binary
# (stripped), then the units, completions and man pages it writes of itself
# into target/packaging/ (the assets in Cargo.toml's
# [package.metadata.generate-rpm]), then the package. Prints the .rpm's path.
#
#   packaging/rpm.sh                          release build, into target/generate-rpm/
#   packaging/rpm.sh --profile dev --no-build -o DIR
#                                             the debug binary already built (tests)
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
build=1
output=target/generate-rpm
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile="$2"; shift ;;
        --no-build) build=0 ;;
        -o | --output) output="$2"; shift ;;
        *) echo "rpm.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
case "$profile" in
    dev) out=debug ;;
    *) out="$profile" ;;
esac

if ! command -v cargo-generate-rpm >/dev/null 2>&1; then
    echo "rpm.sh: cargo-generate-rpm is not installed; run \`cargo install cargo-generate-rpm --locked\`" >&2
    exit 1
fi
if [ "$build" = 1 ]; then
    cargo build --locked --profile "$profile"
fi
target="${CARGO_TARGET_DIR:-target}"
bin="$target/$out/nerdr"
[ -x "$bin" ] || { echo "rpm.sh: $bin is not built" >&2; exit 1; }

packaging/generate.sh "$bin" target/packaging
mkdir -p "$output"
cargo generate-rpm --profile "$profile" --target-dir "$target" -o "$output" >&2
ls -t "$output"/nerdr-*.rpm | head -n 1
