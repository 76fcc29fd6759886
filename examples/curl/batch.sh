#!/usr/bin/env bash
# Sends a folder of exposure brackets to a running Porchlight as one batch and
# downloads the finished photos: the same flow as examples/batch, with curl.
#
#   export PORCHLIGHT_API_KEY=sk-...      # porchlight keys create --name batch
#   examples/curl/batch.sh -o finished/ ~/shoots/12-elm-street
#
# Each subfolder of FOLDER is one scene (1 to 5 brackets); a folder without
# subfolders is one scene. Environment:
#   PORCHLIGHT_URL      the server (default http://127.0.0.1:8787)
#   PORCHLIGHT_API_KEY  the API key (required)
#   OPTIONS             order options shared by every scene, as JSON
#                       (default {"format": "jpeg"}; e.g. {"perspective": true, "tonecraft": true})
#   BATCH_JSON          jq or python3: how JSON is read (default: jq when installed)
# Exits 1 when a scene failed.
set -euo pipefail

usage() { echo "usage: $0 -o OUT FOLDER" >&2; exit 2; }
out=""
while getopts "o:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] && [ -n "$out" ] || usage
# "finished/" and "finished" name the same folder; paths are printed without "//".
[ "$out" = / ] || out=${out%%/}
folder=$1
server=${PORCHLIGHT_URL:-http://127.0.0.1:8787}
server=${server%/}
key=${PORCHLIGHT_API_KEY:?set PORCHLIGHT_API_KEY (create one with: porchlight keys create --name batch)}
options=${OPTIONS:-'{"format": "jpeg"}'}

command -v curl >/dev/null || { echo "batch.sh: curl is required" >&2; exit 1; }
json_tool=${BATCH_JSON:-$(command -v jq >/dev/null && echo jq || echo python3)}
if [ "$json_tool" = jq ]; then
	# json FILE PATH...: the value at each dotted path (data.orders.0.status), one a
	# line, "" for a missing one.
	json() {
		local f=$1
		shift
		jq -r '$ARGS.positional[] as $p | getpath($p | split(".") | map(tonumber? // .)) | if . == null then "" else tostring end' "$f" --args "$@"
	}
	# quote STRING: a JSON string.
	quote() { jq -Rn --arg s "$1" '$s'; }
	# scenes FILE: "index status outputAssetId error" per scene of a batch aggregate.
	scenes() { jq -r '.data.orders[] | "\(.sceneIndex) \(.status) \(.outputAssetId // "-") \(.error // "")"' "$1"; }
else
	command -v python3 >/dev/null || { echo "batch.sh: jq or python3 is required to read JSON" >&2; exit 1; }
	json() {
		python3 -c 'import json, sys
doc = json.load(open(sys.argv[1]))
for path in sys.argv[2:]:
    v = doc
    for k in path.split("."):
        if v is None: break
        v = v[int(k)] if isinstance(v, list) else v.get(k)
    print("" if v is None else json.dumps(v) if isinstance(v, bool) else v)' "$@"
	}
	quote() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
	scenes() {
		python3 -c 'import json, sys
for o in json.load(open(sys.argv[1]))["data"]["orders"]:
    print(o.get("sceneIndex"), o["status"], o.get("outputAssetId") or "-", o.get("error") or "")' "$1"
	}
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
resp=$tmp/response.json

# api METHOD PATH [JSON]: calls /v1 with the key, leaves the answer in $resp, waits
# out 429 (Retry-After) and stops with the server's reason on any other failure.
api() {
	local method=$1 path=$2 body=${3:-} code
	local args=(-sS -o "$resp" -D "$tmp/headers" -w '%{http_code}' -X "$method" -H "X-API-Key: $key")
	[ -n "$body" ] && args+=(-H "Content-Type: application/json" --data-binary "$body")
	while :; do
		code=$(curl "${args[@]}" "$server$path")
		if [ "$code" = 429 ]; then
			sleep "$(awk -F': ' 'tolower($1)=="retry-after"{print $2+0}' "$tmp/headers" | tr -d '\r' | head -n1)"
			continue
		fi
		if [ "$code" -ge 400 ]; then
			echo "batch.sh: $method $path: HTTP $code: $(json "$resp" error.reason)" >&2
			exit 1
		fi
		return 0
	done
}

content_type() {
	case "${1,,}" in
	*.jpg | *.jpeg) echo image/jpeg ;;
	*.png) echo image/png ;;
	*.webp) echo image/webp ;;
	*.tif | *.tiff) echo image/tiff ;;
	*.heic | *.heif) echo image/heic ;;
	*.dng) echo image/x-adobe-dng ;;
	*.cr2) echo image/x-canon-cr2 ;;
	*.cr3) echo image/x-canon-cr3 ;;
	*.nef) echo image/x-nikon-nef ;;
	*.arw) echo image/x-sony-arw ;;
	*.raf) echo image/x-fuji-raf ;;
	*.orf) echo image/x-olympus-orf ;;
	*.rw2) echo image/x-panasonic-rw2 ;;
	*) return 1 ;;
	esac
}

# upload FILE: declare, PUT the bytes to the signed address (no key), confirm, wait
# until ingest made the asset ready; prints the asset id.
upload() {
	local file=$1 type id url status
	type=$(content_type "$file")
	api POST /v1/assets "{\"filename\": $(quote "$(basename "$file")"), \"contentType\": \"$type\"}"
	{ read -r id; read -r url; } < <(json "$resp" data.assetId data.uploadUrl)
	curl -sS -f -X PUT -H "Content-Type: $type" --data-binary "@$file" "$url" -o /dev/null
	api POST "/v1/assets/$id/uploaded"
	while :; do
		api GET "/v1/assets/$id/status"
		status=$(json "$resp" data.status)
		case $status in
		ready) break ;;
		failed)
			echo "batch.sh: $file was refused: $(json "$resp" data.code data.reason | paste -sd: -)" >&2
			exit 1
			;;
		esac
		sleep 0.3
	done
	echo "$id"
}

# Scenes: the subfolders with images, else the folder itself.
names=() dirs=()
for d in "$folder"/*/; do
	[ -d "$d" ] || continue
	for f in "$d"*; do
		if content_type "$f" >/dev/null; then
			names+=("$(basename "$d")") dirs+=("${d%/}")
			break
		fi
	done
done
if [ ${#dirs[@]} -eq 0 ]; then
	names=("$(basename "$folder")") dirs=("$folder")
fi

mkdir -p "$out"
scene_json=()
for i in "${!dirs[@]}"; do
	ids=()
	for f in "${dirs[$i]}"/*; do
		[ -f "$f" ] && content_type "$f" >/dev/null || continue
		id=$(upload "$f")
		ids+=("\"$id\"")
	done
	if [ ${#ids[@]} -lt 1 ] || [ ${#ids[@]} -gt 5 ]; then
		echo "batch.sh: ${dirs[$i]} holds ${#ids[@]} images; a scene has 1 to 5 brackets" >&2
		exit 1
	fi
	echo "uploaded ${names[$i]}: ${#ids[@]} brackets"
	scene_json+=("{\"inputs\": [$(IFS=,; echo "${ids[*]}")]}")
done

# One batch: the shared options at the top level, one entry per scene.
body=$(printf '%s' "$options" | sed 's/}[[:space:]]*$//')
[[ $body =~ ^[[:space:]]*\{[[:space:]]*$ ]] || body="$body,"
body="$body \"name\": $(quote "$(basename "$folder")"), \"scenes\": [$(IFS=,; echo "${scene_json[*]}")]}"
api POST /v1/batches "$body"
{ read -r batch; read -r total; } < <(json "$resp" data.batchId data.total)
echo "batch $batch: $total scenes submitted"

# Follow the batch until every scene has settled.
last=""
while :; do
	api GET "/v1/batches/$batch"
	{ read -r completed; read -r failed; read -r running; read -r pending; read -r settled; } < <(
		json "$resp" data.completed data.failed data.running data.pending data.done)
	line="  $completed completed, $failed failed, $running running, $pending pending"
	[ "$line" != "$last" ] && echo "$line" && last=$line
	[ "$settled" = true ] && break
	sleep 1
done

# Download each completed scene through its signed address (no key needed).
format=$(printf '%s' "$options" | tr -d ' \n' | sed -n 's/.*"format":"\([a-z]*\)".*/\1/p')
case ${format:-jpeg} in jpeg) ext=jpg ;; *) ext=$format ;; esac
cp "$resp" "$tmp/batch.json"
failed=0
while read -r index status asset error; do
	name=${names[$index]}
	if [ "$status" != completed ]; then
		echo "$name: $status: $error"
		failed=$((failed + 1))
		continue
	fi
	api GET "/v1/assets/$asset"
	dst=$out/$name.$ext
	curl -sS -f -o "$dst.part" "$(json "$resp" data.url)"
	mv "$dst.part" "$dst"
	echo "$name: completed -> $dst"
done < <(scenes "$tmp/batch.json")
[ "$failed" -eq 0 ] || { echo "batch.sh: $failed scenes did not complete" >&2; exit 1; }
