package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// op is one kind of operation of the churn, drawn with its weight.
type op struct {
	name   string
	weight int
	// claim: the operation creates a claim (a deletion replaces it when
	// max-claims are live).
	claim bool
	do    func(s *soak, rng *rand.Rand) error
}

// ops is the churn's mix. Creations and deletions of claims balance
// around max-claims; a grant is toggled every few seconds, a snapshot
// created or deleted every ten or so at 3 operations per second.
var ops = []op{
	{"create plain claim", 2, true, func(s *soak, rng *rand.Rand) error { return s.newClaim(rng, plain, dstNS) }},
	{"create same-namespace restore", 2, true, func(s *soak, rng *rand.Rand) error { return s.newClaim(rng, restore, srcNS) }},
	{"create cross-namespace restore", 4, true, func(s *soak, rng *rand.Rand) error { return s.newClaim(rng, xrestore, dstNS) }},
	{"create ungranted cross-namespace restore", 1, true, func(s *soak, rng *rand.Rand) error { return s.newClaim(rng, xother, otherNS) }},
	{deleteClaimOp, 6, false, (*soak).deleteClaim},
	{"toggle grant", 2, false, func(s *soak, _ *rand.Rand) error { return s.toggleGrant() }},
	{"create snapshot", 1, false, func(s *soak, _ *rand.Rand) error { return s.addSnapshot() }},
	{"delete snapshot", 1, false, (*soak).deleteSnapshot},
}

const deleteClaimOp = "delete claim"

// maxSnapshots bounds the live snapshots; at one, none is deleted.
const maxSnapshots = 4

// churn runs the mix at o.rate operations per second until until, calling
// quarter once a quarter, a half and three quarters of the way (1, 2, 3).
func (s *soak) churn(until time.Time, quarter func(int)) {
	rng := rand.New(rand.NewPCG(s.o.seed, 14)) //nolint:gosec // a reproducible load, not a secret
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	pace := time.NewTicker(time.Duration(float64(time.Second) / s.o.rate)) // the load's pace
	defer pace.Stop()
	next := 1 // the next quarter
	for n := 0; ; n++ {
		select {
		case <-s.ctx.Done():
			return
		case now := <-pace.C:
			if now.After(until) {
				return
			}
			if next < 4 && now.After(until.Add(-s.o.duration*time.Duration(4-next)/4)) {
				quarter(next)
				next++
			}
		}
		pick := rng.IntN(total)
		var o op
		for _, o = range ops {
			if pick < o.weight {
				break
			}
			pick -= o.weight
		}
		if o.claim && s.liveClaims() >= s.o.maxClaims {
			o = op{name: deleteClaimOp, do: (*soak).deleteClaim}
		}
		err := o.do(s, rng)
		s.mu.Lock()
		s.ops[o.name]++
		if err != nil {
			s.apiErrors++
		}
		s.mu.Unlock()
		if err != nil {
			logf("%s: %v", o.name, err)
		}
		if n%100 == 99 {
			logf("%d operations, %d live claims, %d PVs seen", n+1, s.liveClaims(), s.pvCount())
		}
	}
}

func (s *soak) liveClaims() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.claims {
		if c.deleted.IsZero() {
			n++
		}
	}
	return n
}

func (s *soak) pvCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pvSeen)
}

// lateRestores is the share of restores that name a snapshot whose
// deletion was requested in the last lateWindow: they must be refused.
const (
	lateRestores = 5 // one in
	lateWindow   = 15 * time.Second
)

// pickSnapshot returns the newest snapshot whose deletion was requested
// in the last lateWindow (late) or was not requested; "" if none. s.mu is
// held.
func (s *soak) pickSnapshot(late bool) string {
	for i := len(s.snapshots) - 1; i >= 0; i-- {
		sn := s.snapshots[i]
		if late && !sn.deleted.IsZero() && time.Since(sn.deleted) < lateWindow || !late && sn.deleted.IsZero() {
			return sn.name
		}
	}
	return ""
}

// newClaim creates a claim of kind k in ns; a restore picks the newest
// snapshot not being deleted (a plain claim if there is none) or, one
// time in lateRestores, one whose deletion was just requested.
func (s *soak) newClaim(rng *rand.Rand, k kind, ns string) error {
	late := rng.IntN(lateRestores) == 0
	s.mu.Lock()
	c := &claim{kind: k, ns: ns, name: fmt.Sprintf("%s-%05d", k, len(s.claims))}
	if k != plain && late {
		if c.snapshot = s.pickSnapshot(true); c.snapshot != "" {
			s.lateRestores++
		}
	}
	if k != plain && c.snapshot == "" {
		c.snapshot = s.pickSnapshot(false)
	}
	s.mu.Unlock()
	if c.snapshot == "" {
		c.kind, c.ns = plain, dstNS
		return s.createClaim(c, nil)
	}
	group := snapshotGroup
	ref := &v1.TypedObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: c.snapshot}
	if ns != srcNS {
		src := srcNS
		ref.Namespace = &src
	}
	return s.createClaim(c, ref)
}

// deleteClaim deletes a claim that is bound or has waited for 30 s (a
// cross-namespace restore in other, or one refused because its snapshot
// was being deleted, never binds).
func (s *soak) deleteClaim(rng *rand.Rand) error {
	s.mu.Lock()
	var candidates []*claim
	for _, c := range s.claims {
		if _, bound := s.pvSeen[c.volumeName()]; c.deleted.IsZero() && c.name != "source" && (bound || time.Since(c.created) > 30*time.Second) {
			candidates = append(candidates, c)
		}
	}
	s.mu.Unlock()
	if len(candidates) == 0 {
		return nil
	}
	c := candidates[rng.IntN(len(candidates))]
	if err := s.env.Kube.CoreV1().PersistentVolumeClaims(c.ns).Delete(s.ctx, c.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", c, err)
	}
	s.mu.Lock()
	c.deleted = time.Now()
	s.mu.Unlock()
	return nil
}

// grantName names the i-th grant.
func grantName(i int) string { return fmt.Sprintf("allow-dst-%04d", i) }

// grantOn reports whether the last grant still exists.
func (s *soak) grantOn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.grants)
	return n > 0 && s.grants[n-1].to.IsZero()
}

// toggleGrant creates the grant letting claims of dst use every snapshot
// of src, or deletes it, and records when it existed.
func (s *soak) toggleGrant() error {
	on := s.grantOn()
	s.mu.Lock()
	n := len(s.grants)
	s.mu.Unlock()
	if on {
		name := s.grants[n-1].name
		if err := s.env.Gateway.GatewayV1().ReferenceGrants(srcNS).Delete(s.ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting grant %s: %w", name, err)
		}
		s.mu.Lock()
		s.grants[n-1].to = time.Now()
		s.mu.Unlock()
		return nil
	}
	w := window{name: grantName(n), from: time.Now()}
	g := &gatewayv1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: srcNS},
		Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: "", Kind: "PersistentVolumeClaim", Namespace: dstNS}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: snapshotGroup, Kind: "VolumeSnapshot"}},
		},
	}
	if _, err := s.env.Gateway.GatewayV1().ReferenceGrants(srcNS).Create(s.ctx, g, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating grant %s: %w", w.name, err)
	}
	s.mu.Lock()
	s.grants = append(s.grants, w)
	s.mu.Unlock()
	return nil
}

// liveSnapshots are the snapshots not being deleted.
func (s *soak) liveSnapshots() []*snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var live []*snapshot
	for _, sn := range s.snapshots {
		if sn.deleted.IsZero() {
			live = append(live, sn)
		}
	}
	return live
}

// addSnapshot creates a snapshot unless maxSnapshots are live.
func (s *soak) addSnapshot() error {
	if len(s.liveSnapshots()) >= maxSnapshots {
		return nil
	}
	return s.createSnapshot()
}

// deleteSnapshot deletes a ready snapshot at random, with restores of it
// possibly pending (its protection must hold it for them), unless it is
// the last.
func (s *soak) deleteSnapshot(rng *rand.Rand) error {
	live := s.liveSnapshots()
	if len(live) <= 1 {
		return nil
	}
	sn := live[rng.IntN(len(live))]
	got, err := s.env.Snaps.SnapshotV1().VolumeSnapshots(srcNS).Get(s.ctx, sn.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got.Status == nil || got.Status.ReadyToUse == nil || !*got.Status.ReadyToUse {
		return nil // not ready yet: its content may not exist
	}
	s.mu.Lock()
	pending := 0
	for _, c := range s.claims {
		if _, bound := s.pvSeen[c.volumeName()]; c.snapshot == sn.name && c.deleted.IsZero() && !bound {
			pending++
		}
	}
	s.mu.Unlock()
	if err := s.env.Snaps.SnapshotV1().VolumeSnapshots(srcNS).Delete(s.ctx, sn.name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("deleting snapshot %s: %w", sn.name, err)
	}
	s.mu.Lock()
	sn.deleted = time.Now()
	if pending > 0 {
		s.deletedWhilePending++
	}
	s.mu.Unlock()
	return nil
}
