# The HTML report and mpiscope view in a real browser (internal/browsertest,
# a module of its own so that chromedp stays out of the main module's build).
#   make browsertest  headless Chromium (scripts/deps.sh installs chromium)
.PHONY: browsertest browsertest-vet

test: browsertest
check: browsertest-vet

browsertest: export CI = true
browsertest: all
	cd internal/browsertest && MPISCOPE_BUILD=$(abspath $(BUILD)) go test -count=1 ./...

browsertest-vet:
	cd internal/browsertest && go vet ./...
