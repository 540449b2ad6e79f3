# Crash safety and hostile input (docs/safety.md).
#   make safety-test  the crash-safety end-to-end tests (needs make lib)
#   make race         the pure-Go packages under the race detector
#   make fuzz         each fuzz target of our file readers for FUZZTIME
FUZZTIME ?= 10s
# make test runs each fuzz target briefly.
CI_FUZZTIME ?= 5s
RACE_PKGS ?= ./profile/... ./internal/report/... ./internal/cli/... ./internal/interpose/... ./internal/symbolize/... ./internal/testutil/...

.PHONY: safety-test race fuzz

safety-test:
	MPISCOPE_BUILD=$(CURDIR)/$(BUILD) go test -count=1 -run 'Safety|ParseConfig|CreateJobDir|WriteFileSymlink|FuzzLoadDir|FuzzUnmarshal' ./internal/mpitest/ ./internal/interpose/ ./profile/

race:
	go test -race -count=1 $(RACE_PKGS)

fuzz:
	go test -run '^$$' -fuzz '^FuzzUnmarshal$$' -fuzztime $(FUZZTIME) ./profile/
	go test -run '^$$' -fuzz '^FuzzLoadDir$$' -fuzztime $(FUZZTIME) ./profile/
	go test -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME) ./internal/interpose/
	go test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) ./internal/trace/
