package sourceprotection

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// The upstream csi-provisioner's RBAC grants "update" but not "patch" on
// persistentvolumeclaims and volumesnapshots: upstream adds and removes its
// finalizers with a read-modify-write Update. A sidecar that replaces it
// with that RBAC unchanged must not fail every clone and restore, so a
// forbidden patch falls back to an update, and when that is forbidden too,
// the source is left unprotected, as upstream then does (ForbiddenError).

// ForbiddenError says that the RBAC of the sidecar allows neither way of
// changing a source's finalizers.
type ForbiddenError struct {
	// Source is the snapshot or claim.
	Source datasource.Source
	// Resource is the source's resource, e.g.
	// "volumesnapshots.snapshot.storage.k8s.io".
	Resource string
	// Verbs are the verbs the API server refused, in the order tried.
	Verbs []string
	// Err is the last refusal.
	Err error
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("this sidecar may not %s %s: grant it \"patch\" (or \"get\" and \"update\") on %s (%v)",
		strings.Join(e.Verbs, " or "), e.Source, e.Resource, e.Err)
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

// finalizerChange is the change to a source's finalizers: add or remove
// one.
type finalizerChange struct {
	finalizer string
	add       bool
}

// edit applies the change to obj and reports whether it changed.
func (c finalizerChange) edit(obj metav1.Object) bool {
	finalizers, changed := c.apply(obj.GetFinalizers())
	if changed {
		obj.SetFinalizers(finalizers)
	}
	return changed
}

// apply returns the finalizers after the change, and whether they changed.
func (c finalizerChange) apply(finalizers []string) ([]string, bool) {
	has := slices.Contains(finalizers, c.finalizer)
	switch {
	case c.add && !has:
		return append(slices.Clone(finalizers), c.finalizer), true
	case !c.add && has:
		return slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return f == c.finalizer }), true
	}
	return finalizers, false
}

// write applies a finalizer change to src, computed from obj (as last
// seen): with a JSON patch guarded by obj's resourceVersion, or, if the
// patch is forbidden, with an update of the object read afresh (the caches
// keep trimmed objects, which must never be written back), conflicts
// retried. It remembers the object its write returned. Call with src
// locked.
func (p *Protector) write(ctx context.Context, src datasource.Source, obj metav1.Object, patch []byte, change finalizerChange) error {
	verb, err := p.patchOrUpdate(ctx, src, obj, types.JSONPatchType, patch, change.edit)
	if verb != "" && apierrors.IsForbidden(err) {
		return &ForbiddenError{Source: src, Resource: resourceOf(src).String(), Verbs: []string{"patch", verb}, Err: err}
	}
	if err != nil {
		return fmt.Errorf("updating the finalizers of %s: %w", src, err)
	}
	return nil
}

// patchOrUpdate writes to src, computed from obj, with a patch of type pt,
// or, if the patch is forbidden, with updates of the object read afresh
// that edit changes. It remembers what its write returned. On an error of
// the update, verb is the verb that failed ("" when the patch failed).
// Call with src locked.
func (p *Protector) patchOrUpdate(ctx context.Context, src datasource.Source, obj metav1.Object, pt types.PatchType, patch []byte,
	edit func(metav1.Object) bool) (verb string, err error) {
	written, err := p.patchObject(ctx, src, pt, patch)
	if err == nil {
		p.writes.wrote(src, obj, written)
		return "", nil
	}
	if !apierrors.IsForbidden(err) {
		return "", err
	}
	live, written, verb, err := p.update(ctx, src, edit)
	if err != nil {
		return verb, err
	}
	p.writes.wrote(src, obj, live) // the cache's version is older than the one read
	if written != live {
		p.writes.wrote(src, live, written)
	}
	return "", nil
}

// updateAttempts bounds the read-modify-write rounds of update: each
// conflict means someone wrote in between, and the next round reads their
// version.
const updateAttempts = 5

// update reads src and writes what edit changes of a copy (it reports
// whether it changed anything) with an update, again on a conflict. It
// returns the object read and the one written (the same when there was
// nothing to change), or the verb that failed and its error.
func (p *Protector) update(ctx context.Context, src datasource.Source, edit func(metav1.Object) bool) (live, written metav1.Object, verb string, err error) {
	for range updateAttempts {
		if live, err = p.getObject(ctx, src); err != nil {
			return nil, nil, "get", err
		}
		updated := copyMeta(live)
		if !edit(updated) {
			return live, live, "", nil
		}
		if written, err = p.updateObject(ctx, src, updated); !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return nil, nil, "update", err
	}
	return live, written, "", nil
}

func resourceOf(src datasource.Source) schema.GroupResource {
	if src.Type() == datasource.Snapshot {
		return schema.GroupResource{Group: datasource.SnapshotGroup, Resource: "volumesnapshots"}
	}
	return schema.GroupResource{Resource: "persistentvolumeclaims"}
}
