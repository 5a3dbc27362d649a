# Thin wrappers; the logic lives in scripts/.
.PHONY: test vet bench azurite-start azurite-stop azurite-env

# go vet, then go test ./... against a private Azurite started and stopped here.
test:
	scripts/test.sh

vet:
	go vet ./...

bench:
	go test -run '^$$' -bench . ./board/

# A long-running Azurite for manual work: eval "$$(make -s azurite-start)".
# Data on disk instead of in memory: scripts/azurite.sh start --location DIR
azurite-start:
	@scripts/azurite.sh start

azurite-stop:
	@scripts/azurite.sh stop

azurite-env:
	@scripts/azurite.sh env
