# Thin wrappers; the logic lives in scripts/.
.PHONY: test vet bench bench-go ffo solve-pgo pipeline-pgo azurite-start azurite-stop azurite-env

# Build for this machine's x86-64 level (v3 on any CPU of the last ten
# years; see scripts/goamd64.sh). Set GOAMD64=v1 for binaries that must
# start on any amd64 CPU.
export GOAMD64 ?= $(shell scripts/goamd64.sh)
# Go's experimental vector package (simd/archsimd): with GOAMD64=v3 the
# solver's move generator works on four directions at once (solve/
# moves_simd.go), and the generation finds a child's canonical occupancy
# among its eight images in two registers (board/minimage_simd.go).
# Elsewhere it changes nothing. GOEXPERIMENT= turns it off.
export GOEXPERIMENT ?= simd

# go vet, then go test ./... against a private Azurite started and stopped here.
test:
	scripts/test.sh

vet:
	go vet ./...

# The benchmark harness (cmd/bench): yardstick, reference, external counter, embedded pipeline
# and Azurite workers, 8x8 plies PLIES; results.md and results.csv in bench-out/.
# Azurite: AZURE_STORAGE_CONNECTION_STRING if set, else a private one.
PLIES ?= 8-11
ENGINES ?= yardstick,reference,external,embedded,azurite
bench:
	go build -o bench-out/bin/ ./cmd/bench ./cmd/seed ./cmd/worker
	bench-out/bin/bench -bin bench-out/bin -plies $(PLIES) -engines $(ENGINES) -out bench-out

# Go benchmarks of the hot paths (rules, sorting and merging keys).
bench-go:
	go test -run '^$$' -bench . ./board/ ./dedup/ ./expand/

# The FFO endgame test positions #40-#49, solved by cmd/solve (one at a
# time per CPU, a CPU with none left helping the others): a best move,
# the score, nodes and time of each. The
# scores and moves are checked against the published ones by
# REVERSI_FFO_ALL=1 go test ./solve -run TestFFO -timeout 0.
ffo:
	go build -o bench-out/bin/ ./cmd/solve
	bench-out/bin/solve solve/testdata/ffo-40-49.txt

# cmd/solve/default.pgo, the CPU profile that go build uses to optimise
# cmd/solve (profile-guided optimisation: mostly inlining the move
# generator and the flips into the search), from one thread solving FFO
# #45-#49: about 40 s. Remake it after large changes to package solve.
solve-pgo:
	REVERSI_FFO_ALL=1 go test ./solve -run 'TestFFO/ffo4[5-9]/threads=1' -count 1 -cpuprofile cmd/solve/default.pgo -o bench-out/solve.test

# cmd/enumerate/default.pgo and the same file in cmd/worker: the CPU
# profile of a whole run to 8x8 ply 13 on the embedded backend (about
# four minutes on two cores and 10 GB of disk in bench-out/), which go
# build uses to optimise both commands (profile-guided optimisation:
# mostly inlining the small functions the sort, the packing and the
# merges call for every edge). Remake it after large changes to the
# pipeline's hot paths; docs/performance.md says what it saves.
pipeline-pgo:
	go build -o bench-out/bin/ ./cmd/enumerate
	rm -rf bench-out/pgo-data
	bench-out/bin/enumerate -plies 13 -data bench-out/pgo-data -cpuprofile bench-out/pipeline.pgo >/dev/null
	rm -rf bench-out/pgo-data
	cp bench-out/pipeline.pgo cmd/enumerate/default.pgo
	cp bench-out/pipeline.pgo cmd/worker/default.pgo

# A long-running Azurite for manual work: eval "$$(make -s azurite-start)".
# Data on disk instead of in memory: scripts/azurite.sh start --location DIR
azurite-start:
	@scripts/azurite.sh start

azurite-stop:
	@scripts/azurite.sh stop

azurite-env:
	@scripts/azurite.sh env
