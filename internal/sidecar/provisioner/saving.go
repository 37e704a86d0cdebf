package provisioner

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// saving holds the PVs Provision returned until the PV cache shows them.
// The controller library saves a PV in the background and hands the claim
// to Provision again on any event until its PV is in the cache (as
// upstream); a second CreateVolume would succeed (it is idempotent by name)
// but count the claim twice, and a lost answer to it would park an attempt
// whose volume is the very one being saved. A PV in here also names its
// volume for the checks that keep a volume a PV names (namedByVolume): a
// settler must not delete the volume of a PV that is on its way to the API
// server.
type saving struct {
	mu sync.Mutex
	// byClaim maps a claim's UID to its PV being saved.
	byClaim map[types.UID]*v1.PersistentVolume
}

// add remembers a copy of pv, returned for the claim with uid: the
// library keeps and changes the object it was handed (its claim
// reference, its annotations) while its save queue retries it.
func (s *saving) add(uid types.UID, pv *v1.PersistentVolume) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byClaim == nil {
		s.byClaim = map[types.UID]*v1.PersistentVolume{}
	}
	s.byClaim[uid] = pv.DeepCopy()
}

// of returns a copy of the claim's PV being saved, nil if there is none.
func (s *saving) of(uid types.UID) *v1.PersistentVolume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byClaim[uid].DeepCopy()
}

// saved forgets the PV once the cache shows it: from then on the library
// sees it, and namedByVolume finds it in the cache.
func (s *saving) saved(pv *v1.PersistentVolume) {
	if pv.Spec.ClaimRef == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if held, ok := s.byClaim[pv.Spec.ClaimRef.UID]; ok && held.Name == pv.Name {
		delete(s.byClaim, pv.Spec.ClaimRef.UID)
	}
}

// list returns the PVs being saved, for reading only: the copies held,
// which nothing else changes.
func (s *saving) list() []*v1.PersistentVolume {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*v1.PersistentVolume, 0, len(s.byClaim))
	for _, pv := range s.byClaim {
		out = append(out, pv)
	}
	return out
}

// VolumeSaved tells the provisioner that the PV cache shows pv: call it
// from the PV informer's add and update handlers.
func (p *Provisioner) VolumeSaved(pv *v1.PersistentVolume) { p.saving.saved(pv) }
