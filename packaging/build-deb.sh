#!/usr/bin/env bash
# Builds Porchlight's Debian package from a built binary and prints its path.
#
#   packaging/build-deb.sh BINARY VERSION OUTDIR
#
# The package installs the binary (/usr/bin/porchlight), the desktop entry, the icon
# in the hicolor theme at four sizes, the OpenCV cascades the privacy detector loads
# (/usr/share/porchlight/models, searched by the program), a systemd user unit for
# `porchlight serve` and the documentation. Depends is computed from the binary's
# shared libraries with dpkg-shlibdeps (or ldd and dpkg -S where it is missing).
# Run it from the repository root. Needs go, dpkg-deb and opencv-data.
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 BINARY VERSION OUTDIR" >&2
	exit 2
fi
bin=$1 version=$2 outdir=$3
GO=${GO:-go}
OPENCV_DATA=${OPENCV_DATA:-/usr/share/opencv4}
# xz keeps the download small; DEB_COMPRESSION=gzip builds faster.
compression=${DEB_COMPRESSION:-xz}

[ -x "$bin" ] || { echo "build-deb: $bin is not an executable (run make build first)" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "build-deb: dpkg-deb not found (apt-get install dpkg)" >&2; exit 1; }

# Debian versions start with a digit and use [A-Za-z0-9.+~-]; `git describe` gives
# v1.2.3, v1.2.3-4-gabc or a bare hash, possibly with -dirty.
debversion() {
	local v=${1#v}
	if [[ $v =~ ^[0-9]+\.[0-9]+ ]]; then
		v=${v//-dirty/+dirty}
		v=$(printf '%s' "$v" | sed -E 's/-([0-9]+)-g([0-9a-f]+)/+\1.g\2/')
	else
		local base
		base=$(sed -nE 's/^Version *= *"([^"]+)".*/\1/p' FyneApp.toml 2>/dev/null | head -n1)
		v="${base:-0.0.0}~git.${v//-dirty/.dirty}"
	fi
	printf '%s' "$v" | tr -c 'A-Za-z0-9.+~\n-' '.'
}
debver=$(debversion "$version")
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root/DEBIAN"

install -D -m 0755 "$bin" "$root/usr/bin/porchlight"
install -D -m 0644 packaging/porchlight.desktop "$root/usr/share/applications/porchlight.desktop"
install -D -m 0644 packaging/porchlight.service "$root/usr/lib/systemd/user/porchlight.service"
install -D -m 0644 packaging/icon.png "$root/usr/share/icons/hicolor/512x512/apps/porchlight.png"
"$GO" build -o "$stage/tools/" ./packaging/genicon ./packaging/copymodels
for size in 64 128 256; do
	dir=$root/usr/share/icons/hicolor/${size}x${size}/apps
	mkdir -p "$dir"
	"$stage/tools/genicon" -size "$size" -o "$dir/porchlight.png"
done
"$stage/tools/copymodels" -from "$OPENCV_DATA" -to "$root/usr/share/porchlight/models"
install -D -m 0644 README.md "$root/usr/share/doc/porchlight/README.md"
install -D -m 0644 packaging/config.example.yaml "$root/usr/share/doc/porchlight/config.example.yaml"
if [ -d examples ]; then
	mkdir -p "$root/usr/share/doc/porchlight/examples"
	cp -r examples/. "$root/usr/share/doc/porchlight/examples/"
	find "$root/usr/share/doc/porchlight/examples" -name '*_test.go' -delete
fi

# Depends from the shared libraries the binary links.
depends=""
if command -v dpkg-shlibdeps >/dev/null; then
	mkdir -p "$stage/shlibs/debian"
	printf 'Source: porchlight\n\nPackage: porchlight\nArchitecture: any\n' >"$stage/shlibs/debian/control"
	depends=$(cd "$stage/shlibs" && dpkg-shlibdeps -O -e "$root/usr/bin/porchlight" 2>/dev/null |
		sed -n 's/^shlibs:Depends=//p')
fi
if [ -z "$depends" ]; then
	# No dpkg-dev: the packages that own the libraries ldd resolves, unversioned.
	depends=$(ldd "$root/usr/bin/porchlight" | awk '/=> \//{print $3}' |
		while read -r lib; do
			dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
		done | cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g')
fi
[ -n "$depends" ] || { echo "build-deb: could not work out the package's dependencies" >&2; exit 1; }

installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: porchlight
Version: $debver
Architecture: $arch
Maintainer: Porchlight <hello@porchlight.photo>
Installed-Size: $installed_size
Depends: $depends
Recommends: libxcursor1, libxrandr2, libxinerama1, libxi6, libxxf86vm1
Section: graphics
Priority: optional
Homepage: https://porchlight.photo
Description: local editor for real-estate listing photos
 Porchlight turns exposure brackets into finished listing photos on your own
 machine: aligned and merged (HDR), verticals straightened, a tone look, a new
 sky, faces and licence plates blurred, objects erased, and rooms staged or
 decluttered through a model backend of your choice (ComfyUI, IOPaint,
 AUTOMATIC1111 or an OpenAI-compatible server).
 .
 It offers a desktop window, watched hot folders and a loopback REST API;
 "porchlight serve" runs headless (a systemd user unit is included) and
 "porchlight doctor" checks an installation.
CONTROL

mkdir -p "$outdir"
out=$outdir/porchlight_${debver}_${arch}.deb
dpkg-deb --root-owner-group -Z"$compression" --build "$root" "$out" >/dev/null
echo "$out"
