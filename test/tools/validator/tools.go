//go:build tools

// Package tools pins the command this module builds.
package tools

import (
	_ "github.com/kubernetes-csi/volume-data-source-validator/cmd/volume-data-source-validator"
)
