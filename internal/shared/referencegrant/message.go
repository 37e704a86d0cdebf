package referencegrant

import (
	"strconv"
	"strings"
)

// The messages are built by appending to one buffer rather than with
// fmt.Sprintf, which cost more than the rest of a check put together (see
// BenchmarkCheck).

// allowedMessage says which grant allows ref.
func allowedMessage(g *Grant, ref Reference) string {
	return make(message, 0, 256).
		text("ReferenceGrant ").quoted(g.Name).text(" in namespace ").quoted(g.Namespace).
		text(" allows ").plural(ref.FromKind).text(" in namespace ").quoted(ref.FromNamespace).
		text(" to use ").text(ref.ToKind).text(" ").quoted(ref.ToName).
		String()
}

// notGrantedMessage tells the user which ReferenceGrant would allow ref, e.g.
//
//	no ReferenceGrant in namespace "prod" allows PersistentVolumeClaims in
//	namespace "test" to use VolumeSnapshot "foo-backup": create one with from
//	{group: "", kind: PersistentVolumeClaim, namespace: test} and to {group:
//	snapshot.storage.k8s.io, kind: VolumeSnapshot, name: foo-backup}
func notGrantedMessage(ref Reference) string {
	return make(message, 0, 384).
		text("no ReferenceGrant in namespace ").quoted(ref.ToNamespace).
		text(" allows ").plural(ref.FromKind).text(" in namespace ").quoted(ref.FromNamespace).
		text(" to use ").text(ref.ToKind).text(" ").quoted(ref.ToName).
		text(": create one with from {group: ").group(ref.FromGroup).
		text(", kind: ").text(ref.FromKind).text(", namespace: ").text(ref.FromNamespace).
		text("} and to {group: ").group(ref.ToGroup).
		text(", kind: ").text(ref.ToKind).text(", name: ").text(ref.ToName).text("}").
		String()
}

// unavailableMessage says that ref cannot be checked, and why.
func unavailableMessage(ref Reference, err error) string {
	return make(message, 0, 384).
		text("cannot check whether ").plural(ref.FromKind).text(" in namespace ").quoted(ref.FromNamespace).
		text(" may use ").text(ref.ToKind).text(" ").quoted(ref.ToName).
		text(" in namespace ").quoted(ref.ToNamespace).text(": ").text(err.Error()).
		String()
}

// message is a user-facing sentence under construction.
type message []byte

func (m message) String() string { return string(m) }

func (m message) text(s string) message { return append(m, s...) }

// quoted appends s as a Go string literal, as %q does. Kubernetes names
// need no escaping, so they skip strconv's rune-by-rune quoting.
func (m message) quoted(s string) message {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(m, s)
		}
	}
	return append(append(append(m, '"'), s...), '"')
}

// group appends an API group as YAML, writing the core group as "".
func (m message) group(group string) message {
	if group == "" {
		return append(m, `""`...)
	}
	return append(m, group...)
}

// plural appends the English plural of a Kubernetes kind, enough for
// messages: PersistentVolumeClaims, VolumeSnapshotClasses, NetworkPolicies.
// Kinds are UpperCamelCase, so their endings are lower case.
func (m message) plural(kind string) message {
	switch {
	case kind == "":
		return append(m, "objects"...)
	case strings.HasSuffix(kind, "s"), strings.HasSuffix(kind, "x"),
		strings.HasSuffix(kind, "ch"), strings.HasSuffix(kind, "sh"):
		return append(append(m, kind...), "es"...)
	case strings.HasSuffix(kind, "y") && len(kind) > 1 && !strings.ContainsRune("aeiou", rune(kind[len(kind)-2])):
		return append(append(m, kind[:len(kind)-1]...), "ies"...)
	default:
		return append(append(m, kind...), 's')
	}
}
