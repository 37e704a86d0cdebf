//go:build tools

// Package codegen pins the code generators `make generate` runs, so they are
// built from the module proxy at these versions: k8s.io/code-generator at
// the version of the k8s.io/client-go the project builds with (deepcopy-gen,
// client-gen, lister-gen, informer-gen), and controller-gen
// (sigs.k8s.io/controller-tools), which writes the CRD YAML from the same
// types.
package codegen

import (
	_ "k8s.io/code-generator/cmd/client-gen"
	_ "k8s.io/code-generator/cmd/deepcopy-gen"
	_ "k8s.io/code-generator/cmd/informer-gen"
	_ "k8s.io/code-generator/cmd/lister-gen"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
