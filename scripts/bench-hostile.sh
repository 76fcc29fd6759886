#!/usr/bin/env bash
# Sends hostile uploads to a real `porchlight serve` through the /v1 API and measures
# what they cost the server: files of a few hundred kB that declare frames of about
# 120 MP (a 16-bit PNG and TIFF of zeros, flat grey JPEGs, a large mask), and files
# cut short (a scan that ends after 64 blocks, a cut PNG and JPEG).
#
# (scripts/hostilegen writes the files; two 12 MP ones let some orders run.)
#
#   1. Builds bin/porchlight and starts `porchlight serve` with its default settings on
#      a free loopback port, with its data, HOME and XDG directories in a temp folder.
#   2. Uploads the files five at a time (declare, PUT to the upload URL, confirm, poll
#      the status) while sampling the server's VmRSS and checking /healthz.
#   3. Restarts it with engine.memory_mb 1024 and submits an order on each ready asset,
#      waiting for each to settle.
#
# It prints the peak resident memory of each phase, each file's final state, code and
# reason, each order's outcome, and whether /healthz answered throughout; it exits 1
# when a target is missed: peak under UPLOAD_LIMIT_MB (1536) for the uploads, under
# the budget plus ORDER_SLACK_MB (300) for the orders, every file in its expected
# state, /healthz always 200.
set -euo pipefail
cd "$(dirname "$0")/.."

UPLOAD_LIMIT_MB=${UPLOAD_LIMIT_MB:-1536}
ORDER_BUDGET_MB=${ORDER_BUDGET_MB:-1024}
ORDER_SLACK_MB=${ORDER_SLACK_MB:-300}
SETTLE_TIMEOUT=${SETTLE_TIMEOUT:-900} # seconds a phase may take to settle
ORDERS=${ORDERS:-1}                   # 0 skips the order phase

command -v curl >/dev/null || { echo "bench-hostile: curl is needed" >&2; exit 2; }
if command -v jq >/dev/null; then
  jget() { jq -r "$1 // empty" 2>/dev/null || true; }
else
  # A dotted path (.data.assetId) read with python3's json module.
  jget() {
    python3 -c '
import json, sys
try:
    v = json.load(sys.stdin)
    for k in sys.argv[1].strip(".").split("."):
        v = v.get(k) if isinstance(v, dict) else None
    print("" if v is None else v)
except Exception:
    pass' "$1"
  }
fi

WORK=$(mktemp -d)
SERVER_PID=""
SAMPLER_PIDS=()
stop_samplers() {
  local p
  for p in "${SAMPLER_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${SAMPLER_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  SAMPLER_PIDS=()
}
stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
cleanup() {
  stop_samplers
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "building bin/porchlight"
go build -o bin/porchlight .

mkdir -p "$WORK/files" "$WORK/home" "$WORK/config" "$WORK/xdgdata" "$WORK/cache"
go run ./scripts/hostilegen "$WORK/files" >"$WORK/manifest"

export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/xdgdata" XDG_CACHE_HOME="$WORK/cache"
export PORCHLIGHT_DATA_DIR="$WORK/data"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
  echo $((20000 + RANDOM % 40000)))
export PORCHLIGHT_LISTEN="127.0.0.1:$PORT"
export PORCHLIGHT_ADMIN_KEY="sk-bench-$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
BASE="http://127.0.0.1:$PORT"
KEY=$PORCHLIGHT_ADMIN_KEY

# start_server PHASE: runs serve in the background and waits for its address line.
start_server() {
  bin/porchlight serve >"$WORK/serve-$1.log" 2>&1 &
  SERVER_PID=$!
  local i
  for i in $(seq 600); do
    grep -q "listening on" "$WORK/serve-$1.log" 2>/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench-hostile: the server did not start:" >&2
  cat "$WORK/serve-$1.log" >&2
  exit 1
}

# start_samplers PHASE: VmRSS of the server every 0.2 s, /healthz every 0.5 s.
start_samplers() {
  local phase=$1 pid=$SERVER_PID
  : >"$WORK/rss-$phase"
  : >"$WORK/health-$phase"
  (while kill -0 "$pid" 2>/dev/null; do
    awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null >>"$WORK/rss-$phase" || true
    sleep 0.2
  done) &
  SAMPLER_PIDS+=($!)
  (while kill -0 "$pid" 2>/dev/null; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz" || true)
    echo "$(date +%T) ${code:-000}" >>"$WORK/health-$phase"
    sleep 0.5
  done) &
  SAMPLER_PIDS+=($!)
}

# peak_mb PHASE: the larger of the kernel's VmHWM and the sampled VmRSS, in MB.
peak_mb() {
  local hwm rss
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0)
  rss=$(sort -n "$WORK/rss-$1" | tail -n1)
  echo $(((${hwm:-0} > ${rss:-0} ? ${hwm:-0} : ${rss:-0}) / 1024))
}

# health_report PHASE: "N of M" checks answered 200, and whether all were.
health_report() {
  local total ok
  total=$(wc -l <"$WORK/health-$1")
  ok=$(awk '$2 == 200' "$WORK/health-$1" | wc -l)
  echo "$ok $total"
}

api() { # METHOD PATH [JSON]
  if [ $# -ge 3 ]; then
    curl -s -X "$1" -H "X-API-Key: $KEY" -H 'Content-Type: application/json' -d "$3" "$BASE$2"
  else
    curl -s -X "$1" -H "X-API-Key: $KEY" "$BASE$2"
  fi
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }

# upload NAME TYPE: declares, sends and confirms one file; writes its id.
upload() {
  local name=$1 ct=$2 resp id url code
  resp=$(api POST /v1/assets "{\"filename\":\"$name\",\"contentType\":\"$ct\"}")
  id=$(jget .data.assetId <<<"$resp")
  url=$(jget .data.uploadUrl <<<"$resp")
  if [ -z "$id" ] || [ -z "$url" ]; then
    echo "declare $name: $resp" >"$WORK/id-$name.err"
    return
  fi
  code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Content-Type: $ct" --data-binary "@$WORK/files/$name" "$url")
  if [ "$code" != 200 ] && [ "$code" != 201 ] && [ "$code" != 204 ]; then
    echo "PUT $name answered $code" >"$WORK/id-$name.err"
    return
  fi
  api POST "/v1/assets/$id/uploaded" >/dev/null
  echo "$id $(now)" >"$WORK/id-$name"
}

# settle NAME...: polls each uploaded file's status until it is ready or failed.
settle() {
  local deadline=$(($(date +%s) + SETTLE_TIMEOUT)) pending=("$@") next name id t0 resp st
  while [ ${#pending[@]} -gt 0 ]; do
    next=()
    for name in "${pending[@]}"; do
      if [ ! -f "$WORK/id-$name" ]; then
        echo "$name - - $(cat "$WORK/id-$name.err" 2>/dev/null)" >>"$WORK/results"
        continue
      fi
      read -r id t0 <"$WORK/id-$name"
      resp=$(api GET "/v1/assets/$id/status")
      st=$(jget .data.status <<<"$resp")
      case $st in
      ready | failed)
        printf '%s %s %s %s\t%s\n' "$name" "$id" "$st" "$(elapsed "$t0" "$(now)")" \
          "$(jget .data.code <<<"$resp") $(jget .data.reason <<<"$resp")" >>"$WORK/results"
        ;;
      *) next+=("$name") ;;
      esac
    done
    pending=("${next[@]+"${next[@]}"}")
    if [ ${#pending[@]} -gt 0 ]; then
      if [ "$(date +%s)" -gt "$deadline" ]; then
        for name in "${pending[@]}"; do echo "$name - timeout - still $st" >>"$WORK/results"; done
        return
      fi
      sleep 2 # reads are limited to 300 a minute per key
    fi
  done
}

MISSES=0
miss() { MISSES=$((MISSES + 1)); }

echo
echo "== uploads: $(wc -l <"$WORK/manifest") hostile files, five at a time, default settings =="
start_server uploads
start_samplers uploads
T_UP=$(now)
: >"$WORK/results"
mapfile -t LINES <"$WORK/manifest"
for ((i = 0; i < ${#LINES[@]}; i += 5)); do
  batch=()
  uploads=()
  for line in "${LINES[@]:i:5}"; do
    read -r name ct _ <<<"$line"
    batch+=("$name")
    upload "$name" "$ct" &
    uploads+=($!)
  done
  for p in "${uploads[@]}"; do wait "$p" || true; done
  settle "${batch[@]}"
done
echo "all settled in $(elapsed "$T_UP" "$(now)") s"
UPLOAD_PEAK=$(peak_mb uploads)
read -r H_OK H_TOTAL <<<"$(health_report uploads)"

printf '%-22s %9s  %-8s %-8s %8s  %s\n' file bytes expected got settled "code and reason"
while read -r name ct want; do
  bytes=$(stat -c %s "$WORK/files/$name")
  got=$(grep "^$name " "$WORK/results" | head -n1 || true)
  st=$(awk '{print $3}' <<<"$got")
  secs=$(awk '{print $4}' <<<"$got")
  why=$(cut -f2 <<<"$got")
  [ "$st" = "$want" ] || miss
  printf '%-22s %9s  %-8s %-8s %8s  %s\n' "$name" "$bytes" "$want" "${st:-?}" "${secs:--}" "$why"
done <"$WORK/manifest"
UP_OK=ok
[ "$UPLOAD_PEAK" -lt "$UPLOAD_LIMIT_MB" ] || { UP_OK=MISSED; miss; }
echo "peak resident memory of the server: $UPLOAD_PEAK MB (target under $UPLOAD_LIMIT_MB MB): $UP_OK"
HEALTH_UP=yes
[ "$H_OK" -eq "$H_TOTAL" ] && [ "$H_TOTAL" -gt 0 ] || { HEALTH_UP=no; miss; }
echo "/healthz answered 200 throughout: $HEALTH_UP ($H_OK of $H_TOTAL checks)"
awk '$2 != 200 {print "  /healthz at " $1 ": " $2}' "$WORK/health-uploads" | head -n5

stop_samplers
stop_server

if [ "$ORDERS" = 0 ]; then
  echo
  [ "$MISSES" -eq 0 ] && { echo "bench-hostile: every upload target met (orders skipped)"; exit 0; }
  echo "bench-hostile: $MISSES target(s) missed (orders skipped)"
  exit 1
fi

echo
echo "== orders: engine.memory_mb $ORDER_BUDGET_MB, one order on each ready asset =="
export PORCHLIGHT_ENGINE_MEMORY_MB=$ORDER_BUDGET_MB
start_server orders
start_samplers orders
T_OR=$(now)
: >"$WORK/orders"
while read -r name id st _; do
  [ "$st" = ready ] || continue
  resp=$(api POST /v1/orders "{\"inputs\":[\"$id\"]}")
  oid=$(jget .data.orderId <<<"$resp")
  if [ -z "$oid" ]; then
    printf '%s - refused - -\t%s\n' "$name" "$(jget .error.reason <<<"$resp")" >>"$WORK/orders"
    continue
  fi
  echo "$name $oid $(now)" >>"$WORK/submitted"
done <"$WORK/results"
deadline=$(($(date +%s) + SETTLE_TIMEOUT))
if [ -f "$WORK/submitted" ]; then
  mapfile -t PENDING <"$WORK/submitted"
  while [ ${#PENDING[@]} -gt 0 ]; do
    next=()
    for line in "${PENDING[@]}"; do
      read -r name oid t0 <<<"$line"
      resp=$(api GET "/v1/orders/$oid")
      st=$(jget .data.status <<<"$resp")
      case $st in
      completed | failed | cancelled | expired)
        printf '%s %s %s %s\t%s %s\n' "$name" "$oid" "$st" "$(elapsed "$t0" "$(now)")" \
          "$(jget .data.errorCode <<<"$resp")" "$(jget .data.error <<<"$resp")" >>"$WORK/orders"
        ;;
      *)
        if [ "$(date +%s)" -gt "$deadline" ]; then
          printf '%s %s timeout - \tstill %s\n' "$name" "$oid" "$st" >>"$WORK/orders"
        else
          next+=("$line")
        fi
        ;;
      esac
    done
    PENDING=("${next[@]+"${next[@]}"}")
    [ ${#PENDING[@]} -eq 0 ] || sleep 2
  done
fi
echo "all settled in $(elapsed "$T_OR" "$(now)") s"
ORDER_PEAK=$(peak_mb orders)
read -r H_OK H_TOTAL <<<"$(health_report orders)"
printf '%-22s %-10s %8s  %s\n' input outcome seconds "error"
while IFS= read -r line; do
  read -r name _ st secs _ <<<"$(cut -f1 <<<"$line")"
  [ "$st" != timeout ] || miss
  printf '%-22s %-10s %8s  %s\n' "$name" "$st" "$secs" "$(cut -f2 <<<"$line")"
done <"$WORK/orders"
ORDER_LIMIT=$((ORDER_BUDGET_MB + ORDER_SLACK_MB))
OR_OK=ok
[ "$ORDER_PEAK" -lt "$ORDER_LIMIT" ] || { OR_OK=MISSED; miss; }
echo "peak resident memory of the server: $ORDER_PEAK MB (target under $ORDER_BUDGET_MB + $ORDER_SLACK_MB MB): $OR_OK"
HEALTH_OR=yes
[ "$H_OK" -eq "$H_TOTAL" ] && [ "$H_TOTAL" -gt 0 ] || { HEALTH_OR=no; miss; }
echo "/healthz answered 200 throughout: $HEALTH_OR ($H_OK of $H_TOTAL checks)"
awk '$2 != 200 {print "  /healthz at " $1 ": " $2}' "$WORK/health-orders" | head -n5

echo
if [ "$MISSES" -eq 0 ]; then
  echo "bench-hostile: every target met"
else
  echo "bench-hostile: $MISSES target(s) missed"
  exit 1
fi
