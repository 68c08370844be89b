#!/usr/bin/env bash
# Writes what every package installs besides the binary, made by the built
# binary BIN itself so it matches it: the systemd user units for
# /usr/lib/systemd/user, bash/zsh/fish completions and gzipped man pages;
# and a stripped copy of BIN for the packagers that do not strip (the RPM).
#   packaging/generate.sh BIN DIR   ->  DIR/{bin,units,completions,man}/
set -euo pipefail
bin="$1"
dir="$2"
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/units" "$dir/completions" "$dir/man"
# cp, then strip in place: macOS strip has no -o.
cp "$bin" "$dir/bin/nerdr"
chmod u+w "$dir/bin/nerdr"
strip "$dir/bin/nerdr"
"$bin" service package-units --dir "$dir/units"
"$bin" completions bash >"$dir/completions/nerdr"
"$bin" completions zsh >"$dir/completions/_nerdr"
"$bin" completions fish >"$dir/completions/nerdr.fish"
"$bin" man --dir "$dir/man" 2>/dev/null
gzip -9n "$dir"/man/*.1
