//go:build faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
	"github.com/xns-csi/csi-provisioner/test/localdriver"
)

// settleBound bounds how long a scenario's claims may take to settle
// after the fault ended, and then how long the end state may take to
// reconcile (a volume of a deleted claim being deleted, a finalizer's
// 5 s linger).
const settleBound = 3 * time.Minute

// protectionFinalizers are the sidecar's source-protection finalizers.
var protectionFinalizers = datasource.Finalizers

// tally is what a reconciliation counted, for the scenario's summary line.
type tally struct {
	claims, bound, refused, deleted, pvs, volumes int
}

// reconcile waits until every claim of the burst has settled (bound,
// refused with its event, or gone), then until the driver's state and the
// cluster's agree, and fails the test with every disagreement left after
// settleBound. It logs one summary line for docs/reliability.md.
func (sc *scenario) reconcile(t *testing.T) tally {
	t.Helper()
	start := time.Now()
	var unsettled []string
	slow := false
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, settleBound, true, func(ctx context.Context) (bool, error) {
		unsettled = sc.unsettled(ctx)
		if len(unsettled) > 0 && !slow && time.Since(start) > 10*time.Second {
			slow = true
			t.Logf("%d claims not settled 10 s after the burst, e.g. %s", len(unsettled), unsettled[0])
		}
		return len(unsettled) == 0, nil
	})
	if err != nil {
		t.Fatalf("claims not settled after %v:\n  %s", settleBound, strings.Join(unsettled, "\n  "))
	}
	settled := time.Since(start)
	var problems []string
	var counts tally
	err = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, settleBound, true, func(ctx context.Context) (bool, error) {
		problems, counts = sc.disagreements(ctx)
		return len(problems) == 0, nil
	})
	if err != nil {
		t.Errorf("the driver's state and the cluster's disagree after %v:\n  %s", settleBound, strings.Join(problems, "\n  "))
	}
	t.Logf("claims settled %v after the burst, state reconciled %v later", settled.Round(100*time.Millisecond), (time.Since(start) - settled).Round(100*time.Millisecond))
	create := sc.st.countCalls(t, "CreateVolume")
	del := sc.st.countCalls(t, "DeleteVolume")
	t.Logf("faults: RESULT %s claims=%d bound=%d refused=%d deleted=%d pvs=%d volumes=%d CreateVolume=%d %v DeleteVolume=%d driverStarts=%d sidecarStarts=%d",
		sc.id, counts.claims, counts.bound, counts.refused, counts.deleted, counts.pvs, counts.volumes,
		create.started, codeSummary(create.codes), del.started, sc.st.driver.Starts(), sc.st.sidecar.Starts())
	return counts
}

func codeSummary(codes map[string]int) string {
	var parts []string
	for code, n := range codes {
		parts = append(parts, fmt.Sprintf("%s:%d", code, n))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, " ") + "}"
}

// unsettled lists the claims still on their way: to be bound, refused with
// their event, or gone.
func (sc *scenario) unsettled(ctx context.Context) []string {
	sc.mu.Lock()
	claims := slices.Clone(sc.claims)
	sc.mu.Unlock()
	var out []string
	for _, c := range claims {
		pvc, err := world.Kube.CoreV1().PersistentVolumeClaims(c.ns).Get(ctx, c.name, metav1.GetOptions{})
		switch {
		case c.deleted && apierrors.IsNotFound(err):
		case err != nil:
			out = append(out, fmt.Sprintf("%s: %v", c, err))
		case c.deleted:
			out = append(out, c.String()+" still exists after its deletion")
		case c.refusedBecause == "" && pvc.Status.Phase != v1.ClaimBound:
			out = append(out, fmt.Sprintf("%s is %s; events: %s", c, pvc.Status.Phase, eventsOf(ctx, c.ns, c.name)))
		case c.refusedBecause != "" && pvc.Spec.VolumeName == "" && !hasEvent(ctx, c.ns, c.name, c.refusedBecause):
			out = append(out, fmt.Sprintf("%s has no event saying %q yet; events: %s", c, c.refusedBecause, eventsOf(ctx, c.ns, c.name)))
		}
	}
	return out
}

// disagreements compares the cluster with the driver's state directory:
// every bound claim has exactly one PV and one backend volume with the
// expected data; no volume without a PV; no PV without a volume or
// without its claim; no claim provisioned across namespaces without a
// grant; no source-protection finalizer left; every unprovisioned claim
// has a ProvisioningFailed event that says why.
func (sc *scenario) disagreements(ctx context.Context) ([]string, tally) {
	var out []string
	var n tally
	problem := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	vols, err := localdriver.ReadStoredVolumes(sc.st.state)
	if err != nil {
		return []string{err.Error()}, n
	}
	pvList, err := world.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}, n
	}
	var pvs []v1.PersistentVolume
	for _, pv := range pvList.Items {
		if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == sc.st.name {
			pvs = append(pvs, pv)
		}
	}
	volByID := map[string]localdriver.StoredVolume{}
	for _, v := range vols {
		volByID[v.ID] = v
	}
	pvsOfHandle := map[string][]string{}
	for _, pv := range pvs {
		pvsOfHandle[pv.Spec.CSI.VolumeHandle] = append(pvsOfHandle[pv.Spec.CSI.VolumeHandle], pv.Name)
		if _, ok := volByID[pv.Spec.CSI.VolumeHandle]; !ok {
			problem("PV %s has no backend volume %s", pv.Name, pv.Spec.CSI.VolumeHandle)
		}
	}
	for _, v := range vols {
		if len(pvsOfHandle[v.ID]) != 1 {
			problem("backend volume %s (%s) has %d PVs %v: leaked or shared", v.ID, v.Name, len(pvsOfHandle[v.ID]), pvsOfHandle[v.ID])
		}
	}

	sc.mu.Lock()
	byKey := map[string]*claim{}
	for _, c := range sc.claims {
		byKey[c.ns+"/"+c.name] = c
		n.claims++
		if c.deleted {
			n.deleted++
		}
	}
	sc.mu.Unlock()
	live := map[string]v1.PersistentVolumeClaim{} // by UID
	for _, ns := range []string{sc.src, sc.dst, sc.other} {
		list, err := world.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return []string{err.Error()}, n
		}
		for _, pvc := range list.Items {
			live[string(pvc.UID)] = pvc
			for _, f := range protectionFinalizers {
				if slices.Contains(pvc.Finalizers, f) {
					problem("claim %s/%s still has the finalizer %s", pvc.Namespace, pvc.Name, f)
				}
			}
		}
	}
	for _, pv := range pvs {
		ref := pv.Spec.ClaimRef
		if ref == nil {
			problem("PV %s has no claim", pv.Name)
			continue
		}
		if _, ok := live[string(ref.UID)]; !ok {
			problem("PV %s (%s) belongs to the deleted claim %s/%s and was not deleted", pv.Name, pv.Status.Phase, ref.Namespace, ref.Name)
		}
	}
	for _, pvc := range live {
		c := byKey[pvc.Namespace+"/"+pvc.Name]
		if pvc.Spec.VolumeName == "" {
			if c != nil && c.refusedBecause == "" {
				problem("claim %s is not provisioned", c)
			}
			if !hasEvent(ctx, pvc.Namespace, pvc.Name, "") {
				problem("unprovisioned claim %s/%s has no ProvisioningFailed event", pvc.Namespace, pvc.Name)
			}
			n.refused++
			continue
		}
		if c != nil {
			n.bound++
		}
		if c != nil && c.refusedBecause != "" {
			problem("claim %s was provisioned: it should have been refused (%s)", c, c.refusedBecause)
		}
		var mine []v1.PersistentVolume
		for _, pv := range pvs {
			if ref := pv.Spec.ClaimRef; ref != nil && string(ref.UID) == string(pvc.UID) {
				mine = append(mine, pv)
			}
		}
		if len(mine) != 1 || mine[0].Name != pvc.Spec.VolumeName {
			problem("claim %s/%s (volume %s) has %d PVs of this driver", pvc.Namespace, pvc.Name, pvc.Spec.VolumeName, len(mine))
			continue
		}
		vol, ok := volByID[mine[0].Spec.CSI.VolumeHandle]
		if !ok {
			continue // reported above
		}
		if got, want := readData(vol.DataDir), sc.wantData(c); got != want {
			problem("claim %s/%s holds %q, want %q", pvc.Namespace, pvc.Name, got, want)
		}
	}
	snaps, err := world.Snaps.SnapshotV1().VolumeSnapshots(sc.src).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}, n
	}
	for _, s := range snaps.Items {
		for _, f := range protectionFinalizers {
			if slices.Contains(s.Finalizers, f) {
				problem("snapshot %s/%s still has the finalizer %s", s.Namespace, s.Name, f)
			}
		}
	}
	n.pvs, n.volumes = len(pvs), len(vols)
	sort.Strings(out)
	return out, n
}

// wantData is what the volume of c must hold; c is nil for the source.
func (sc *scenario) wantData(c *claim) string {
	switch {
	case c == nil || c.kind == clone:
		return sc.current
	case c.kind == restore || c.kind == xrestore || c.kind == xdenied:
		return sc.snapData
	}
	return "<none>"
}

func readData(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "data.txt"))
	if errors.Is(err, fs.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// hasEvent reports whether the claim has a ProvisioningFailed event whose
// message contains part, or one of its "|"-separated alternatives.
func hasEvent(ctx context.Context, ns, name, part string) bool {
	events, err := world.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return false
	}
	return slices.ContainsFunc(events.Items, func(e v1.Event) bool {
		return e.Reason == "ProvisioningFailed" && e.Message != "" &&
			slices.ContainsFunc(strings.Split(part, "|"), func(p string) bool { return strings.Contains(e.Message, p) })
	})
}

func eventsOf(ctx context.Context, ns, name string) string {
	events, err := world.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, e := range events.Items {
		parts = append(parts, fmt.Sprintf("[%s %s x%d: %s]", e.Type, e.Reason, e.Count, e.Message))
	}
	return strings.Join(parts, " ")
}
