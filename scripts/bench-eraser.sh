#!/usr/bin/env bash
# The magic eraser beside its anchors: OpenCV's Telea and Navier-Stokes inpainting,
# xphoto's shift-map and FSR_BEST, and G'MIC's patch-based inpainting
# (scripts/bench_inpaint.py), on synthetic blob holes of 3, 8 and 15% and on the
# object removals of engine/imaging/inpaint/testdata/objects. Prints per-case and mean
# figures and writes the object removals' contact sheet to $SHEET.
#
# The anchors' fills are cached in $BENCH_DIR (default: a folder under the user's
# cache): FSR_BEST and shift-map take minutes a case and do not change between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/porchlight/eraser-bench}
SHEET=${SHEET:-docs/eraser-contact-sheet.jpg}
mkdir -p "$BENCH_DIR"
/usr/bin/python3 -c 'import cv2; cv2.xphoto.inpaint' || { echo "bench-eraser: needs python3-opencv with xphoto"; exit 1; }
command -v gmic >/dev/null || { echo "bench-eraser: needs gmic"; exit 1; }
go test -count=1 -timeout 60m -v -run '^TestEraserBench$' ./engine/imaging/inpaint/ \
	-args -eraser-bench "$BENCH_DIR" -eraser-sheet "$(realpath -m "$SHEET")"
