#!/usr/bin/env bash
# Measures develop's colour correction against OpenCV's white balance (grey-world
# and learning-based), side by side on the same inputs: every test interior and
# exterior under known lights (invariance, chroma kept) and the real interiors and
# bracket scenes (neutral surfaces). Writes the contact sheet to docs/ when SHEET
# is set (SHEET=docs/color-contact-sheet.jpg).
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${PORCHLIGHT_TESTDATA:-../shared/testdata}
[ -d "$DATA/interiors" ] || { echo "test photos not found at $DATA (set PORCHLIGHT_TESTDATA)"; exit 1; }
PY=/usr/bin/python3 # the system Python carries python3-opencv
# WORK keeps the inputs and results there for a look; by default they go.
if [ -n "${WORK:-}" ]; then
  OUT=$WORK; mkdir -p "$OUT"
else
  OUT=$(mktemp -d)
  trap 'rm -rf "$OUT"' EXIT
fi

go build -o "$OUT/porchlight" .
go build -o "$OUT/colorbench" ./scripts/colorbench
PL="$OUT/porchlight"
export XDG_CONFIG_HOME="$OUT/config" PORCHLIGHT_DATA_DIR="$OUT/data"

"$OUT/colorbench" render -data "$DATA" -out "$OUT"

# Ours: the shipped path, porchlight process with colour correction on.
mkdir -p "$OUT/in-ours" "$OUT/real-ours"
for f in "$OUT"/in/*.png; do
  "$PL" process -q --color-correction -o "$OUT/in-ours/$(basename "$f")" "$f"
done
for f in "$OUT"/real/*.png; do
  "$PL" process -q --color-correction -o "$OUT/real-ours/$(basename "$f")" "$f"
done
# The interior bracket scenes, merged without and with the correction.
for scene in living_room_windows room_window_e995 office_fisheye_5dmk2 library_phone \
             house_interior_kim handheld_indoor_phone memorial_church_debevec; do
  mapfile -t frames < <(find "$DATA/brackets/$scene" -maxdepth 1 -type f \( -iname '*.jpg' -o -iname '*.png' \) | sort)
  "$PL" process -q --color-correction=false -o "$OUT/real/$scene.png" "${frames[@]}"
  "$PL" process -q -o "$OUT/real-ours/$scene.png" "${frames[@]}"
done

# The anchors, on the same inputs ("none" is the input itself).
"$PY" scripts/opencv_wb.py "$OUT/in" "$OUT/in-grayworld" "$OUT/in-learning"
"$PY" scripts/opencv_wb.py "$OUT/real" "$OUT/real-grayworld" "$OUT/real-learning"

"$OUT/colorbench" report -out "$OUT" ${SHEET:+-sheet "$SHEET"}
