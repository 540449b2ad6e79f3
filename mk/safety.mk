# Crash safety and hostile input (docs/safety.md).
#   make safety-test  the crash-safety end-to-end tests (needs make lib)
#   make race         the pure-Go packages under the race detector
#   make fuzz         each fuzz target of our file readers for FUZZTIME
#                     (FUZZTIME_FILES for the targets that write a file per input)
FUZZTIME ?= 10s
FUZZTIME_FILES ?= $(FUZZTIME)
# make test runs each fuzz target briefly, for a number of inputs rather than
# a duration: with Go 1.26 a -fuzztime duration races the fuzz coordinator's
# deadline and can fail with a bare "context deadline exceeded" and no failing
# input (golang/go#75804, fixed in Go 1.27). About 10 s in all.
CI_FUZZTIME ?= 100000x
CI_FUZZTIME_FILES ?= 5000x
RACE_PKGS ?= ./profile/... ./internal/report/... ./internal/cli/... ./internal/interpose/... ./internal/symbolize/... ./internal/testutil/...

.PHONY: safety-test race fuzz

safety-test:
	MPISCOPE_BUILD=$(abspath $(BUILD)) go test -count=1 -run 'Safety|ParseConfig|CreateJobDir|WriteFileSymlink|FuzzLoadDir|FuzzUnmarshal' ./internal/mpitest/ ./internal/interpose/ ./profile/

race:
	go test -race -count=1 $(RACE_PKGS)

fuzz:
	go test -run '^$$' -fuzz '^FuzzUnmarshal$$' -fuzztime $(FUZZTIME) ./profile/
	go test -run '^$$' -fuzz '^FuzzLoadDir$$' -fuzztime $(FUZZTIME_FILES) ./profile/
	go test -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME) ./internal/interpose/
	go test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME_FILES) ./internal/trace/
	go test -run '^$$' -fuzz '^FuzzWalk$$' -fuzztime $(FUZZTIME_FILES) ./internal/trace/
