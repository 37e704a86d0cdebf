# A multi-arch image with BuildKit (the default builder of Docker 23 and
# later), e.g.
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=v0.1.0 -t ghcr.io/xns-csi/csi-provisioner:v0.1.0 --push .
#
# `make image` builds one for the local platform.

# Build stage: runs on the build machine's platform and cross-compiles a
# static binary for the target's, so no stage runs under emulation. The
# vendored sources need no network.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
# Set by BuildKit from --platform (default: the build machine's).
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY . .
# The four binaries: the sidecar, the volume-data-source-validator, which
# deploy/validator runs from this image with command
# /volume-data-source-validator, the snapshot-validation-webhook, run
# with command /snapshot-validation-webhook, and the
# storage-transfer-controller, which deploy/transfer runs with command
# /storage-transfer-controller. They are built with the Makefile's
# BUILD_TAGS (grpcnotrace: see there).
RUN export CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} GOFLAGS=-mod=vendor GOTOOLCHAIN=local && \
    go build -trimpath -tags grpcnotrace -ldflags "-s -w -X main.version=${VERSION}" -o /out/ ./cmd/csi-provisioner \
      ./cmd/snapshot-validation-webhook ./cmd/storage-transfer-controller ./cmd/volume-data-source-validator

# Run stage: distroless static, which has a variant for every platform Go
# targets here. It runs as the unprivileged user 65532 ("nonroot"): the CSI
# driver's socket must be writable by that user (see "Deploying" in
# README.md).
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="csi-provisioner" \
      org.opencontainers.image.description="CSI external-provisioner, a drop-in for kubernetes-csi/external-provisioner v6.3, with cross-namespace snapshot sources (KEP-3294), a volume-data-source-validator that understands them and a snapshot validation webhook" \
      org.opencontainers.image.source="https://github.com/xns-csi/csi-provisioner" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/csi-provisioner /out/volume-data-source-validator /out/snapshot-validation-webhook \
     /out/storage-transfer-controller /
USER 65532:65532
# The sidecar; the validator is run with `command: ["/volume-data-source-validator"]`,
# the webhook with `command: ["/snapshot-validation-webhook"]`, the transfer
# controller with `command: ["/storage-transfer-controller"]`.
ENTRYPOINT ["/csi-provisioner"]
