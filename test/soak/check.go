package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/test/localdriver"
)

// watchLag is how long after its deletion returned a grant may still be in
// the sidecar's cache, which learns of the deletion through its watch
// (docs/guarantees.md): a check in that second may still find it.
const watchLag = time.Second

// protectionFinalizers are the sidecar's source-protection finalizers.
var protectionFinalizers = datasource.Finalizers

// cannotBind reports whether c can no longer be provisioned: it restores
// across namespaces without a grant, or its snapshot is gone (after a
// deletion requested before the claim's creation, or after it while the
// claim was not yet in progress, e.g. waiting for a grant). A claim whose
// snapshot is being deleted but still there must be served or refused, and
// the snapshot then released.
func (s *soak) cannotBind(w *world, c *claim) bool {
	_, exists := w.snaps[c.snapshot]
	return c.kind == xother || c.snapshot != "" && !exists
}

func (s *soak) snapshotNamed(name string) *snapshot {
	for _, sn := range s.snapshots {
		if sn.name == name {
			return sn
		}
	}
	return nil
}

// world is the cluster's objects in the soak's namespaces and the driver's
// volumes, read once.
type world struct {
	claims  map[string]v1.PersistentVolumeClaim // by namespace/name
	pvs     []v1.PersistentVolume               // of the soak's driver
	vols    []localdriver.StoredVolume
	refused map[string]bool // namespace/name of claims with a ProvisioningFailed event
	snaps   map[string][]string
}

func (s *soak) read(ctx context.Context) (*world, error) {
	w := &world{claims: map[string]v1.PersistentVolumeClaim{}, refused: map[string]bool{}, snaps: map[string][]string{}}
	var err error
	if w.vols, err = localdriver.ReadStoredVolumes(s.stack.State); err != nil {
		return nil, err
	}
	pvs, err := s.env.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, pv := range pvs.Items {
		if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == driverName {
			w.pvs = append(w.pvs, pv)
		}
	}
	for _, ns := range []string{srcNS, dstNS, otherNS} {
		list, err := s.env.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, c := range list.Items {
			w.claims[ns+"/"+c.Name] = c
		}
		events, err := s.env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=ProvisioningFailed"})
		if err != nil {
			return nil, err
		}
		for _, e := range events.Items {
			w.refused[ns+"/"+e.InvolvedObject.Name] = true
		}
	}
	snaps, err := s.env.Snaps.SnapshotV1().VolumeSnapshots(srcNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, sn := range snaps.Items {
		w.snaps[sn.Name] = sn.Finalizers
	}
	return w, nil
}

// settled is the end state of the claims the soak created.
type settled struct {
	// unsettled are claims neither bound, nor unable to bind, nor gone
	// after their deletion, settleBound after the churn.
	unsettled []string
	// refused cannot bind; silent are those of them without a
	// ProvisioningFailed event (events are best effort), and stillSilent
	// those still without one after eventsWait.
	refused     int
	silent      []string
	stillSilent []string
	eventsWait  time.Duration
}

// settle waits until every claim the soak created is bound, unable to bind
// (cannotBind), or gone when deleted, and returns the end state after
// settleBound at most.
func (s *soak) settle() settled {
	var out settled
	_ = wait.PollUntilContextTimeout(s.ctx, time.Second, settleBound, true, func(ctx context.Context) (bool, error) {
		w, err := s.read(ctx)
		if err != nil {
			logf("reading the cluster: %v", err)
			return false, nil
		}
		out = settled{}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.claims {
			pvc, exists := w.claims[c.ns+"/"+c.name]
			switch {
			case !c.deleted.IsZero() && exists:
				out.unsettled = append(out.unsettled, c.String()+" still exists after its deletion")
			case !c.deleted.IsZero():
			case !exists:
				out.unsettled = append(out.unsettled, c.String()+" is gone")
			case pvc.Status.Phase == v1.ClaimBound:
			case s.cannotBind(w, c):
				out.refused++
			default:
				out.unsettled = append(out.unsettled, fmt.Sprintf("%s (restoring %q) is %s", c, c.snapshot, pvc.Status.Phase))
			}
		}
		out.silent = s.silent(w)
		return len(out.unsettled) == 0, nil
	})
	return out
}

// silent lists the live claims that cannot bind and have no
// ProvisioningFailed event yet. s.mu is held.
func (s *soak) silent(w *world) []string {
	var out []string
	for _, c := range s.claims {
		pvc, exists := w.claims[c.ns+"/"+c.name]
		if exists && c.deleted.IsZero() && pvc.Status.Phase != v1.ClaimBound && s.cannotBind(w, c) && !w.refused[c.ns+"/"+c.name] {
			out = append(out, fmt.Sprintf("%s (created %s) restoring %s", c, c.created.Format(time.StampMilli), c.snapshot))
		}
	}
	return out
}

// awaitEvents waits, settleBound at most, until every claim that cannot
// bind has its ProvisioningFailed event; it returns those still without
// one and how long it waited.
func (s *soak) awaitEvents() ([]string, time.Duration) {
	start := time.Now()
	var silent []string
	_ = wait.PollUntilContextTimeout(s.ctx, time.Second, settleBound, true, func(ctx context.Context) (bool, error) {
		w, err := s.read(ctx)
		if err != nil {
			logf("reading the cluster: %v", err)
			return false, nil
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		silent = s.silent(w)
		return len(silent) == 0, nil
	})
	return silent, time.Since(start)
}

// problems are the disagreements of a reconciliation, by count.
type problems struct {
	leaked, orphaned, finalizers, unbound []string
}

func (p problems) none() bool {
	return len(p.leaked)+len(p.orphaned)+len(p.finalizers)+len(p.unbound) == 0
}

// reconcile compares the driver's volumes with the cluster until they
// agree or settleBound passes: no backend volume without exactly one PV
// (leaked), no PV without a backend volume or whose claim is gone
// (orphaned: the Delete policy reclaims them), no bound claim without its
// PV, and no protection finalizer on a snapshot no pending claim restores
// or on a claim (the soak clones nothing).
func (s *soak) reconcile() problems {
	var p problems
	_ = wait.PollUntilContextTimeout(s.ctx, time.Second, settleBound, true, func(ctx context.Context) (bool, error) {
		w, err := s.read(ctx)
		if err != nil {
			logf("reading the cluster: %v", err)
			return false, nil
		}
		p = s.disagreements(w)
		return p.none(), nil
	})
	return p
}

func (s *soak) disagreements(w *world) problems {
	var p problems
	pvsOf := map[string][]string{}
	live := map[string]bool{}
	for _, c := range w.claims {
		live[string(c.UID)] = true
	}
	have := map[string]bool{}
	for _, v := range w.vols {
		have[v.ID] = true
	}
	for _, pv := range w.pvs {
		handle := pv.Spec.CSI.VolumeHandle
		pvsOf[handle] = append(pvsOf[handle], pv.Name)
		switch {
		case !have[handle]:
			p.orphaned = append(p.orphaned, fmt.Sprintf("PV %s has no backend volume %s", pv.Name, handle))
		case pv.Spec.ClaimRef == nil || !live[string(pv.Spec.ClaimRef.UID)]:
			p.orphaned = append(p.orphaned, fmt.Sprintf("PV %s (%s) outlived its claim", pv.Name, pv.Status.Phase))
		}
	}
	for _, v := range w.vols {
		if n := len(pvsOf[v.ID]); n != 1 {
			p.leaked = append(p.leaked, fmt.Sprintf("backend volume %s (%s) has %d PVs", v.ID, v.Name, n))
		}
	}
	pending := map[string]bool{} // snapshots a live unbound claim restores
	s.mu.Lock()
	for _, c := range s.claims {
		if pvc, ok := w.claims[c.ns+"/"+c.name]; ok && pvc.Spec.VolumeName == "" && c.snapshot != "" {
			pending[c.snapshot] = true
		}
	}
	s.mu.Unlock()
	for key, c := range w.claims {
		for _, f := range protectionFinalizers {
			if slices.Contains(c.Finalizers, f) {
				p.finalizers = append(p.finalizers, fmt.Sprintf("claim %s has %s", key, f))
			}
		}
		if c.Status.Phase == v1.ClaimBound && volumeHandleOf(w, c.Spec.VolumeName) == "" {
			p.unbound = append(p.unbound, fmt.Sprintf("claim %s is bound to %s, which is not a PV of the driver", key, c.Spec.VolumeName))
		}
	}
	for name, fins := range w.snaps {
		for _, f := range protectionFinalizers {
			if slices.Contains(fins, f) && !pending[name] {
				p.finalizers = append(p.finalizers, fmt.Sprintf("snapshot %s/%s has %s and no pending restore", srcNS, name, f))
			}
		}
	}
	for _, l := range [][]string{p.leaked, p.orphaned, p.finalizers, p.unbound} {
		sort.Strings(l)
	}
	return p
}

func volumeHandleOf(w *world, pvName string) string {
	for _, pv := range w.pvs {
		if pv.Name == pvName {
			return pv.Spec.CSI.VolumeHandle
		}
	}
	return ""
}

// authorization checks every cross-namespace claim the driver was asked
// to provision: the interval from its creation to the driver's receipt of
// its first CreateVolume (which follows the sidecar's check) must meet a
// grant's life, extended by watchLag; a claim of other never. A restore of
// a snapshot whose deletion was requested before the claim was created
// must never reach the driver either.
func (s *soak) authorization() (unauthorized, deletedSource []string, err error) {
	sent, err := s.firstCreateVolume()
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.claims {
		at, ok := sent[c.volumeName()]
		if !ok {
			continue
		}
		if sn := s.snapshotNamed(c.snapshot); sn != nil && !sn.deleted.IsZero() && sn.deleted.Before(c.created) {
			deletedSource = append(deletedSource, fmt.Sprintf("%s (created %s) restores %s, deleted %s",
				c, c.created.Format(time.StampMicro), sn.name, sn.deleted.Format(time.StampMicro)))
		}
		if c.kind != xrestore && c.kind != xother {
			continue
		}
		if c.kind == xother || !granted(s.grants, c.created, at) {
			unauthorized = append(unauthorized, fmt.Sprintf("%s (created %s) reached the driver at %s with no grant",
				c, c.created.Format(time.StampMicro), at.Format(time.StampMicro)))
		}
	}
	return unauthorized, deletedSource, nil
}

// firstCreateVolume reads the driver's call log: when it received the
// first CreateVolume of each volume name.
func (s *soak) firstCreateVolume() (map[string]time.Time, error) {
	records, err := localdriver.ReadCallLog(s.calls)
	if err != nil {
		return nil, err
	}
	sent := map[string]time.Time{}
	for _, r := range records {
		if _, ok := sent[r.Name]; r.Method == "CreateVolume" && r.Phase == "start" && !ok {
			sent[r.Name] = r.Time
		}
	}
	return sent, nil
}

// granted reports whether a grant check made between created and sent
// (a claim's creation and the driver's receipt of its CreateVolume) can
// have found one of the grants: one was created before sent and deleted
// no earlier than watchLag before created.
func granted(grants []window, created, sent time.Time) bool {
	for _, w := range grants {
		if !w.from.After(sent) && (w.to.IsZero() || !created.After(w.to.Add(watchLag))) {
			return true
		}
	}
	return false
}

// grantLatencies are, for each cross-namespace claim created while no
// grant existed and provisioned later, the time from the creation of the
// grant it was provisioned under to its PV.
func (s *soak) grantLatencies() []time.Duration {
	sent, _ := s.firstCreateVolume() // read once already by authorization
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for _, c := range s.claims {
		pv, bound := s.pvSeen[c.volumeName()]
		at, ok := sent[c.volumeName()]
		if c.kind != xrestore || !bound || !ok {
			continue
		}
		var under *window
		for i := range s.grants {
			if !s.grants[i].from.After(at) {
				under = &s.grants[i]
			}
		}
		if under != nil && under.from.After(c.created) {
			out = append(out, pv.Sub(under.from))
		}
	}
	slices.Sort(out)
	return out
}

// teardown deletes every claim, snapshot and grant of the soak and waits
// until the driver has no volume and no snapshot content of the soak's
// driver is left; it returns what is left after settleBound.
func (s *soak) teardown() (left []string) {
	ctx := s.ctx
	s.mu.Lock()
	claims, snaps, grants := slices.Clone(s.claims), slices.Clone(s.snapshots), slices.Clone(s.grants)
	s.mu.Unlock()
	for _, c := range append(claims, &claim{ns: srcNS, name: "source"}) {
		if err := s.env.Kube.CoreV1().PersistentVolumeClaims(c.ns).Delete(ctx, c.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			left = append(left, err.Error())
		}
	}
	for _, sn := range snaps {
		if err := s.env.Snaps.SnapshotV1().VolumeSnapshots(srcNS).Delete(ctx, sn.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			left = append(left, err.Error())
		}
	}
	for _, g := range grants {
		if err := s.env.Gateway.GatewayV1().ReferenceGrants(srcNS).Delete(ctx, g.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			left = append(left, err.Error())
		}
	}
	if len(left) > 0 {
		return left
	}
	_ = wait.PollUntilContextTimeout(ctx, time.Second, settleBound, true, func(ctx context.Context) (bool, error) {
		w, err := s.read(ctx)
		if err != nil {
			logf("reading the cluster: %v", err)
			return false, nil
		}
		left = left[:0]
		for key, c := range w.claims {
			left = append(left, fmt.Sprintf("claim %s (finalizers %v)", key, c.Finalizers))
		}
		for name, fins := range w.snaps {
			left = append(left, fmt.Sprintf("snapshot %s/%s (finalizers %v)", srcNS, name, fins))
		}
		for _, pv := range w.pvs {
			left = append(left, fmt.Sprintf("PV %s (%s)", pv.Name, pv.Status.Phase))
		}
		for _, v := range w.vols {
			left = append(left, fmt.Sprintf("backend volume %s (%s)", v.ID, v.Name))
		}
		contents, err := s.env.Snaps.SnapshotV1().VolumeSnapshotContents().List(ctx, metav1.ListOptions{})
		if err != nil {
			logf("listing snapshot contents: %v", err)
			return false, nil
		}
		for _, c := range contents.Items {
			if c.Spec.Driver == driverName {
				left = append(left, fmt.Sprintf("snapshot content %s (finalizers %v)", c.Name, c.Finalizers))
			}
		}
		sort.Strings(left)
		return len(left) == 0, nil
	})
	return left
}

// eventLag is how far behind the sidecar's events are: the time since the
// newest event its driver's provisioner wrote (its first or last time).
func (s *soak) eventLag() time.Duration {
	var newest time.Time
	for _, ns := range []string{srcNS, dstNS, otherNS} {
		events, err := s.env.Kube.CoreV1().Events(ns).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return -1
		}
		for _, e := range events.Items {
			if strings.Contains(e.Source.Component, driverName) && e.LastTimestamp.After(newest) {
				newest = e.LastTimestamp.Time
			}
		}
	}
	if newest.IsZero() {
		return -1
	}
	return time.Since(newest)
}
