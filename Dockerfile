# Build stage: a static binary from the vendored sources, no network needed.
FROM golang:1.26 AS build
WORKDIR /src
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOFLAGS=-mod=vendor GOTOOLCHAIN=local \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/csi-provisioner ./cmd/csi-provisioner

# Run stage: distroless static, non-root.
FROM gcr.io/distroless/static-debian12:nonroot
LABEL org.opencontainers.image.title="csi-provisioner" \
      org.opencontainers.image.description="CSI external-provisioner with cross-namespace snapshot sources (KEP-3294)"
COPY --from=build /out/csi-provisioner /csi-provisioner
USER 65532:65532
ENTRYPOINT ["/csi-provisioner"]
