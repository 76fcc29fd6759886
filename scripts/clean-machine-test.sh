#!/usr/bin/env bash
# Runs the CI entry point (.ci/run) the way a fresh machine would: in a new clone of
# the committed HEAD, with ../shared beside it as CI has it, with empty TMPDIR and
# HOME, and CI=true. Go's module and build caches (and where modules come from) are
# kept, so only the repository, the temp folder and the home folder start empty.
# Prints where it ran and the verdict, removes everything it made, and exits with
# the command's status.
#
#   CLEAN_TEST_CMD   command run in the clone instead of "bash .ci/run"
#                    (e.g. CLEAN_TEST_CMD='go test ./internal/testphotos/')
#   CLEAN_TEST_KEEP  when set to 1, leave the folder in place for a look
set -euo pipefail

src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
head=$(git -C "$src" rev-parse HEAD)
cmd=${CLEAN_TEST_CMD:-bash .ci/run}

# Go's caches and configuration are read now: with HOME changed, go would look for
# them under the new, empty home.
for v in GOMODCACHE GOCACHE GOPROXY GOSUMDB GOPRIVATE GONOPROXY GONOSUMDB GOTOOLCHAIN GOFLAGS; do
	export "$v=$(go env "$v")"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/porchlight-clean.XXXXXX")
cleanup() {
	if [ "${CLEAN_TEST_KEEP:-}" = 1 ]; then
		echo "clean-machine test: kept $work"
		return
	fi
	chmod -R u+w "$work" 2>/dev/null || true # tests may leave read-only files
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT # so that the EXIT trap cleans up on Ctrl-C and kill too
trap 'exit 143' TERM

git clone --quiet --no-checkout "$src" "$work/main"
git -C "$work/main" checkout --quiet --detach "$head"
if ! git -C "$src" diff --quiet HEAD -- 2>/dev/null; then
	echo "clean-machine test: note: uncommitted changes in $src are not part of this run"
fi

# The test photos: CI has the shared folder beside the checkout.
if [ -d "$src/../shared" ]; then
	ln -s "$(cd "$src/../shared" && pwd -P)" "$work/shared"
else
	echo "clean-machine test: warning: no shared folder beside $src; the photo tests will skip"
fi

mkdir "$work/tmp" "$work/home"
echo "clean-machine test: commit $head"
echo "clean-machine test: running '$cmd' in $work/main"
echo "clean-machine test: TMPDIR=$work/tmp HOME=$work/home GOCACHE=$GOCACHE GOMODCACHE=$GOMODCACHE"

start=$(date +%s)
status=0
(
	cd "$work/main"
	# Nothing of this shell's session reaches the run: no display, no Porchlight or
	# XDG settings pointing into the real home.
	unset DISPLAY WAYLAND_DISPLAY XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
	for v in $(compgen -e | grep '^PORCHLIGHT_' || true); do unset "$v"; done
	export TMPDIR="$work/tmp" HOME="$work/home" CI=true
	exec bash -c "$cmd"
) || status=$?
took=$(($(date +%s) - start))

if [ "$status" = 0 ]; then
	echo "clean-machine test: PASS ($cmd, ${took}s, in $work/main)"
else
	echo "clean-machine test: FAIL, exit status $status ($cmd, ${took}s, in $work/main)"
fi
exit "$status"
