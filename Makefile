# Porchlight build. `make run` and `make test` work on a fresh Debian machine with Go:
# both run `setup` first, which installs the system packages the build needs.

GO        ?= go
BIN       ?= bin/porchlight
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/porchlight/porchlight/app.Version=$(VERSION)
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TESTFLAGS ?= -timeout 40m

# System packages: Fyne's GL/X11 headers, LibRaw, libjpeg-turbo, libwebp, lensfun, OpenCV's
# trained cascades, Xvfb for the window tests, exiftool and ImageMagick for fixtures.
# Every name must be a real package, not a virtual one (Debian 12's "exiftool" is
# virtual): dpkg-query never reports a virtual name installed, so setup would run
# apt-get on every call.
APT_PACKAGES := gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev \
	libxinerama-dev libxi-dev libxxf86vm-dev libxkbcommon-dev \
	libraw-dev libraw-bin libturbojpeg0-dev libjpeg62-turbo-dev libwebp-dev \
	liblensfun-dev liblensfun-data-v1 \
	opencv-data xvfb xauth libimage-exiftool-perl imagemagick

# Anchors for `make bench-anchors`: the tools our speed and quality are measured against.
ANCHOR_PACKAGES := imagemagick libvips-tools enfuse hugin-tools python3-opencv time bc gmic

.PHONY: setup build run serve test test-short test-clean bench bench-anchors bench-hostile bench-color bench-eraser anchor-setup fuzz vet fmt package deb tarball test-package clean

setup: .setup-stamp
.setup-stamp: Makefile
	@missing=""; for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	$(GO) mod download
	@touch $@

build: setup
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

# Opens the window where a display exists; otherwise serves the API headless.
run: build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		exec ./$(BIN); \
	else \
		echo "No display found: running 'porchlight serve' (the API on loopback)."; \
		echo "To get an API key, start it with one of your own: PORCHLIGHT_ADMIN_KEY=sk-\$$(openssl rand -hex 24) make run"; \
		echo "or stop it (Ctrl-C) and run ./$(BIN) keys create --name me   (the database allows one process at a time)."; \
		exec ./$(BIN) serve; \
	fi

serve: build
	./$(BIN) serve

test: setup
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) test $(TESTFLAGS) ./...
	$(MAKE) test-package

test-short: setup
	$(GO) test -short ./...

# .ci/run in a fresh clone of HEAD with empty TMPDIR and HOME, as on a new machine
# (Go's caches are kept). CLEAN_TEST_CMD runs another command there instead.
test-clean:
	bash scripts/clean-machine-test.sh

bench: setup
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Hostile uploads through a real `porchlight serve`: peak resident memory, every
# file's final state and reason, /healthz throughout; then orders under
# engine.memory_mb 1024.
bench-hostile: setup
	bash scripts/bench-hostile.sh

# Colour correction beside OpenCV's grey-world and learning-based white balance
# (needs python3-opencv, an anchor package), with a contact sheet of the interiors.
bench-color: anchor-setup
	SHEET=docs/color-contact-sheet.jpg bash scripts/bench-color.sh

# The magic eraser beside OpenCV's, xphoto's and G'MIC's inpainting on synthetic holes
# and object removals, with a contact sheet of the removals (anchor fills cached).
bench-eraser: anchor-setup
	SHEET=docs/eraser-contact-sheet.jpg bash scripts/bench-eraser.sh

# The anchor tools, installed only for the benchmarks that compare against them.
anchor-setup: setup
	@missing=""; for p in $(ANCHOR_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

bench-anchors: anchor-setup
	bash scripts/bench-anchors.sh

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Packages for Linux, in dist/: the `fyne package` tarball (binary, desktop entry,
# icon, install Makefile) and a .deb (binary, desktop entry, hicolor icons, the
# privacy detector's OpenCV cascades, a systemd user unit for `porchlight serve`).
# fyne.io/tools is not reachable from the module proxy here, so the fyne tool comes
# from cmd/fyne of the Fyne release the program is built with.
DIST         ?= dist
FYNE_VERSION ?= $(shell $(GO) list -m -f '{{.Version}}' fyne.io/fyne/v2)
FYNE         := bin/tools/fyne-$(FYNE_VERSION)

$(FYNE):
	GOBIN=$(CURDIR)/bin/tools/gobin $(GO) install fyne.io/fyne/v2/cmd/fyne@$(FYNE_VERSION)
	mv bin/tools/gobin/fyne $@

package: tarball deb

tarball: build $(FYNE)
	packaging/build-tarball.sh $(FYNE) $(BIN) $(VERSION) $(DIST)

deb: build
	GO=$(GO) packaging/build-deb.sh $(BIN) $(VERSION) $(DIST)

# Installs the .deb, runs the installed `porchlight serve` as its systemd unit would,
# checks /healthz, stops it and removes the package. Needs root and dpkg; skips
# otherwise. The package is compressed with gzip here to keep the round quick.
test-package:
	@if ! command -v dpkg-deb >/dev/null; then echo "test-package: skipped, dpkg-deb not found (not a Debian system)"; exit 0; fi; \
	$(MAKE) build && \
	deb=$$(GO=$(GO) DEB_COMPRESSION=gzip packaging/build-deb.sh $(BIN) $(VERSION) $(DIST)/test) && \
	PORCHLIGHT_DEB=$(CURDIR)/$$deb $(GO) test -count=1 -v -timeout 5m -run TestDeb ./packaging/debtest/

clean:
	rm -rf bin dist .setup-stamp
