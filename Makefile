# mpiscope: every rule is one command or one script.
#   make demo     install what is missing, build, profile the bundled sample, print the report
#   make test     install what is missing, build, run all tests
#   make install PREFIX=dir
SHELL := /bin/sh
BUILD ?= build
PREFIX ?= /usr/local
NP ?= 4
# One libmpiscope per MPI C compiler found; override with MPICC=/path/to/mpicc.
MPICCS ?= $(or $(MPICC),$(shell for c in mpicc.openmpi mpicc.mpich; do command -v $$c >/dev/null 2>&1 && echo $$c; done))
export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1

.PHONY: all deps lib cli demo run-demo test check gotest install bench clean

.DEFAULT_GOAL := all
-include mk/*.mk

all: lib cli

deps:
	@sh scripts/deps.sh

lib:
	@test -n "$(MPICCS)" || { echo "make: no MPI C compiler found (mpicc.openmpi, mpicc.mpich); run 'make deps' or set MPICC=" >&2; exit 1; }
	@for cc in $(MPICCS); do sh scripts/build-lib.sh $$cc $(BUILD) || exit 1; done
	@rm -f $(BUILD)/lib/libmpiscope.so $(BUILD)/lib/libmpiscope.a
	@def=$$(go run ./cmd/mpiwrapgen -mpicc mpicc -print-family 2>/dev/null || basename $$(ls -d $(BUILD)/lib/*/ | head -1)); \
	  ln -s $$def/libmpiscope.so $(BUILD)/lib/libmpiscope.so; \
	  ln -s $$def/libmpiscope.a $(BUILD)/lib/libmpiscope.a

cli:
	go build -o $(BUILD)/bin/mpiscope ./cmd/mpiscope

demo: deps all run-demo

run-demo:
	@mkdir -p $(BUILD)/examples
	mpicc -g -O1 -o $(BUILD)/examples/sample examples/sample.c
	cd $(BUILD)/examples && MPISCOPE_OUT=mpiscope-demo mpirun --oversubscribe -np $(NP) ../bin/mpiscope ./sample
	$(BUILD)/bin/mpiscope report $$(ls -dt $(BUILD)/examples/mpiscope-demo* | head -1)

# The test rules export CI=true: a test whose MPI, build or tool is missing
# then fails instead of skipping (testutil.SkipOrFail).
test gotest: export CI = true
test: deps all check run-demo race
	$(MAKE) fuzz FUZZTIME=$(CI_FUZZTIME) FUZZTIME_FILES=$(CI_FUZZTIME_FILES)
	$(MAKE) gotest

check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); test -z "$$out" || { echo "gofmt needed: $$out" >&2; exit 1; }
	go vet ./...
	@for cc in $(MPICCS); do f=$$(go run ./cmd/mpiwrapgen -mpicc $$cc -print-family); CC=$$cc go vet -tags mpiscope_$$f ./internal/interpose ./cmd/libmpiscope || exit 1; done

# -timeout: internal/mpitest takes 6-8 minutes on 2 cores, near go test's
# default of 10 per package; on a loaded node (load average 48, 2026-11-28)
# it ran past it and was stopped with a panic, its tests passing.
gotest:
	MPISCOPE_BUILD=$(abspath $(BUILD)) go test -count=1 -timeout 25m ./...

install: all
	mkdir -p $(PREFIX)/bin $(PREFIX)/lib
	cp $(BUILD)/bin/mpiscope $(PREFIX)/bin/
	cp -P $(BUILD)/lib/libmpiscope.so $(BUILD)/lib/libmpiscope.a $(PREFIX)/lib/
	for d in $(BUILD)/lib/*/; do mkdir -p $(PREFIX)/lib/$$(basename $$d) && cp $$d/libmpiscope.* $(PREFIX)/lib/$$(basename $$d)/; done

bench: all
	MPISCOPE_BUILD=$(abspath $(BUILD)) go run ./bench/cmd/runbench -build $(BUILD)

clean:
	rm -rf $(BUILD)
