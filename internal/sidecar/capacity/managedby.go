package capacity

import (
	"fmt"
	"hash/fnv"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ManagedByForNode is the ManagedByLabel value of the sidecar on one node
// (--node-deployment), as upstream names it: DefaultManagedBy and the node
// name joined by '-'. A result longer than a label value may be (63) is
// shortened as upstream does: the prefix is cut and the FNV-1a hash of the
// prefix inserted before the node name, or, if the node name alone is too
// long, the prefix and the hash of the whole name are used.
func ManagedByForNode(nodeName string) string {
	return shortName(DefaultManagedBy, nodeName, validation.LabelValueMaxLength)
}

func shortName(base, suffix string, maxLength int) string {
	name := suffix
	if base != "" {
		name = base + "-" + suffix
	}
	if len(name) <= maxLength {
		return name
	}
	const hashLength = 8
	baseLength := maxLength - len(suffix) - hashLength - 2 // the two dashes
	if baseLength <= 0 {
		prefix := base[:min(len(base), max(0, maxLength-hashLength-1))]
		short := fnvHash(name)
		if prefix != "" {
			short = prefix + "-" + short
		}
		return short[:min(maxLength, len(short))]
	}
	return base[:baseLength] + "-" + fnvHash(base) + "-" + suffix
}

func fnvHash(s string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s)) // a hash.Hash never fails to write
	return fmt.Sprintf("%08x", h.Sum32())
}
