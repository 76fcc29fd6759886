#!/usr/bin/env bash
# Wraps a built binary with `fyne package` into the tarball Fyne apps ship on Linux
# (binary, desktop entry, icon and a Makefile with install / user-install targets)
# and prints its path.
#
#   packaging/build-tarball.sh FYNE BINARY VERSION OUTDIR
#
# fyne rewrites FyneApp.toml (it bumps Build), so it runs on a copy in a temporary
# folder. Run it from the repository root.
set -euo pipefail

if [ $# -ne 4 ]; then
	echo "usage: $0 FYNE BINARY VERSION OUTDIR" >&2
	exit 2
fi
fyne=$(readlink -f "$1") bin=$(readlink -f "$2") version=$3 outdir=$4
[ -x "$fyne" ] || { echo "build-tarball: $1 is not the fyne tool" >&2; exit 1; }
[ -x "$bin" ] || { echo "build-tarball: $2 is not an executable (run make build first)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -D -m 0644 FyneApp.toml "$stage/FyneApp.toml"
install -D -m 0644 packaging/icon.png "$stage/packaging/icon.png"
install -m 0755 "$bin" "$stage/porchlight"
(cd "$stage" && "$fyne" package -os linux -exe porchlight >"$stage/fyne.log" 2>&1) || {
	cat "$stage/fyne.log" >&2
	exit 1
}
name=$(sed -nE 's/^ *Name *= *"([^"]+)".*/\1/p' FyneApp.toml | head -n1)
mkdir -p "$outdir"
out=$outdir/porchlight-${version}-linux-$(go env GOARCH).tar.xz
mv "$stage/${name:-porchlight}.tar.xz" "$out"
echo "$out"
