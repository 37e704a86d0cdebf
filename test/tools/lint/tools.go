//go:build tools

// Package lint pins the linters `make verify` runs, so `make tools` builds
// them from the module proxy at these versions: golangci-lint, and
// logcheck (sigs.k8s.io/logtools), which checks that logging is structured
// and contextual. logcheck runs as a program of its own: golangci-lint's
// module plugins need a custom build that fetches golangci-lint's source
// with git, which this project does not depend on.
package lint

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	_ "sigs.k8s.io/logtools/logcheck"
)
