#!/usr/bin/env bash
# Measures Porchlight against the tools photographers would otherwise use, side by
# side in one run on this machine, and prints the ratios.
#   export:  porchlight export  vs  ImageMagick convert  vs  vipsthumbnail
#   develop: porchlight process vs  OpenCV AlignMTB+MergeMertens  vs  align_image_stack+enfuse
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${PORCHLIGHT_TESTDATA:-../shared/testdata}
OFFICE=$DATA/brackets/office_fisheye_5dmk2
[ -d "$OFFICE" ] || { echo "test photos not found at $DATA (set PORCHLIGHT_TESTDATA)"; exit 1; }
RUNS=${RUNS:-5}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

go build -o "$OUT/porchlight" .
PL="$OUT/porchlight"
export XDG_CONFIG_HOME="$OUT/config" PORCHLIGHT_DATA_DIR="$OUT/data"

# median wall time in seconds of RUNS runs of a command
median() {
  local times=() t0 t1
  for _ in $(seq "$RUNS"); do
    t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    times+=("$(echo "$t1 - $t0" | bc -l)")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# peak resident memory in MB of one run
peak_mb() {
  /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n1 | awk '{printf "%.0f", $1/1024}'
}

ratio() { echo "scale=2; $1 / $2" | bc -l; }

echo "== export: 21 MP JPEG -> WebP q80, longest edge 2048 ($RUNS runs, median) =="
IN=$OFFICE/IMG_6963.JPG
pl=$(median "$PL" export --format webp --quality 80 --max-edge 2048 -o "$OUT/pl.webp" "$IN")
im=$(median convert "$IN" -resize 2048x2048 -quality 80 "$OUT/im.webp")
vt=$(median vipsthumbnail "$IN" --size 2048 -o "$OUT/vt.webp[Q=80]")
printf 'porchlight export   %6.3f s\n' "$pl"
printf 'imagemagick convert %6.3f s   (porchlight is %sx faster; target >= 2)\n' "$im" "$(ratio "$im" "$pl")"
printf 'vipsthumbnail       %6.3f s   (porchlight takes %sx its time; target <= 1.5)\n' "$vt" "$(ratio "$pl" "$vt")"

echo
echo "== develop: 3 x 21 MP brackets -> aligned, merged, toned JPEG q92 ($RUNS runs, median) =="
B=("$OFFICE/IMG_6961.JPG" "$OFFICE/IMG_6963.JPG" "$OFFICE/IMG_6965.JPG")
pl=$(median "$PL" process -q --tonecraft --quality 92 -o "$OUT/pl.jpg" "${B[@]}")
cv=$(median "${PYTHON:-/usr/bin/python3}" scripts/opencv_merge.py "$OUT/cv.jpg" "${B[@]}")
en=$(median bash -c "align_image_stack -a '$OUT/al_' ${B[*]} && enfuse -o '$OUT/en.tif' '$OUT'/al_*.tif && convert '$OUT/en.tif' -quality 92 '$OUT/en.jpg'")
printf 'porchlight process         %6.2f s  peak %s MB (target < 1024)\n' "$pl" "$(peak_mb "$PL" process -q --tonecraft -o "$OUT/pl2.jpg" "${B[@]}")"
printf 'opencv mtb+mertens         %6.2f s  (porchlight is %sx faster; target >= 4)\n' "$cv" "$(ratio "$cv" "$pl")"
printf 'align_image_stack+enfuse   %6.2f s  (porchlight is %sx faster; target >= 8)\n' "$en" "$(ratio "$en" "$pl")"
