# Benchmark targets beyond `make bench` (docs/performance.md).
#   make bench-quick      3 rounds (2 in-process), 10,000 synthetic ranks (about 2.5 minutes)
#   make bench-callgrind  instructions per wrapped call (valgrind)
#   make bench-all        make bench for every MPI family installed

.PHONY: bench-quick bench-callgrind bench-all

bench-quick: all
	go run ./bench/cmd/runbench -build $(BUILD) -rounds 3 -ab-rounds 2 -layouts 2 -synth-ranks 10000

bench-callgrind: all
	go run ./bench/cmd/runbench -build $(BUILD) -only callgrind

bench-all: all
	go run ./bench/cmd/runbench -build $(BUILD) -family all
