# syntax=docker/dockerfile:1
#
# One image holding every command (enumerate, seed, worker, inspect), built
# statically and run as a non-root user on a distroless base (no shell, no
# package manager). The default entrypoint is the worker, the thing you
# scale; seed and inspect are /usr/local/bin/seed and /usr/local/bin/inspect:
#
#   docker build -t reversi .
#   docker run --rm -e AZURE_STORAGE_CONNECTION_STRING reversi -run demo
#   docker run --rm --entrypoint /usr/local/bin/seed -e AZURE_STORAGE_CONNECTION_STRING reversi -run demo

# The build runs on the builder's own platform and cross-compiles, so a
# multi-platform build (docker buildx --platform linux/amd64,linux/arm64)
# needs no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# x86-64-v3 (AVX2, BMI2, LZCNT: every Azure VM and container host of the
# last decade) makes the solver and the blob decoders 10-20% faster; pass
# --build-arg GOAMD64=v1 for an image that starts on any amd64 CPU. Go
# ignores it for other architectures.
ARG GOAMD64=v3
# With v3, Go's experimental vector package speeds the solver's move
# generator (solve/moves_simd.go); --build-arg GOEXPERIMENT= turns it off.
ARG GOEXPERIMENT=simd
WORKDIR /src
# Modules first: this layer is reused while only the source changes.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH GOAMD64=$GOAMD64 GOEXPERIMENT=$GOEXPERIMENT \
    go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/...

# static-debian12 has CA certificates (for https to Azure), tzdata and a
# writable /tmp; the :nonroot tag runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/worker"]
