package capacity

import (
	"fmt"
	"slices"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// planCase is a state and the decision the planner must take. Cases named
// as in upstream's TestCapacityController port its inputs and expected
// objects; its mock driver reports 1Gi in segment layer0=foo and 2Gi in
// layer0=bar, times a class's "multiplier" parameter, and the reports here
// are those answers.
type planCase struct {
	noOwner, immediateBinding bool
	segments                  []Segment
	classes                   []*storagev1.StorageClass
	existing                  []*storagev1.CSIStorageCapacity
	reports                   map[Key]Report
	// want are the decisions: "ask <class> <segment>" for an unreported
	// item, "create <object>", "update <name>: <object>" and
	// "delete <name>: <reason>".
	want []string
}

func TestPlan(t *testing.T) {
	lateSC, immediateSC := newClass("late-sc"), newClass("immediate-sc", bindsImmediately())
	directSC, tripleSC := newClass("direct-sc"), newClass("triple-sc", withParameters(map[string]string{"multiplier": "3"}))
	fourReports := reports(reportEntry{"direct-sc", layer0, "1Gi"}, reportEntry{"triple-sc", layer0, "3Gi"},
		reportEntry{"direct-sc", layer0other, "2Gi"}, reportEntry{"triple-sc", layer0other, "6Gi"})
	otherManager := map[string]string{ManagedByLabel: "manual"}

	tests := map[string]planCase{
		"empty": {},
		"one segment": {
			segments: segments(layer0),
		},
		"one class": {
			classes: []*storagev1.StorageClass{newClass("fast-sc")},
		},
		"one capacity object": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi"}),
			want:     []string{"create other-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"no owner": {
			noOwner:  true,
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi"}),
			want:     []string{"create other-sc {layer0=foo} 1Gi"},
		},
		"one maximum volume size": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi,1Mi"}),
			want:     []string{"create other-sc {layer0=foo} 1Gi max=1Mi owner=StatefulSet/test-driver(controller)"},
		},
		"ignore SC with immediate binding": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc", bindsImmediately())},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi"}),
		},
		"support SC with immediate binding": {
			immediateBinding: true,
			segments:         segments(layer0),
			classes:          []*storagev1.StorageClass{newClass("other-sc", bindsImmediately())},
			reports:          reports(reportEntry{"other-sc", layer0, "1Gi"}),
			want:             []string{"create other-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"reuse one capacity object, no changes": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("test-capacity-1", "other-sc", layer0)},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi"}),
		},
		"reuse one capacity object, update capacity": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("test-capacity-1", "other-sc", layer0)},
			reports:  reports(reportEntry{"other-sc", layer0, "2Gi"}),
			want:     []string{"update test-capacity-1: other-sc {layer0=foo} 2Gi owner=StatefulSet/test-driver(controller)"},
		},
		"reuse one capacity object, add owner": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("test-capacity-1", "other-sc", layer0, ownerRefs())},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi"}),
			want:     []string{"update test-capacity-1: other-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"reuse one capacity object, keep owner": {
			noOwner:  true,
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("test-capacity-1", "other-sc", layer0)},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi"}),
		},
		"obsolete object, missing SC": {
			segments: segments(layer0),
			existing: []*storagev1.CSIStorageCapacity{newCapacity("test-capacity-1", "other-sc", layer0)},
			want:     []string{"delete test-capacity-1: StorageClassGone"},
		},
		"obsolete object, missing segment": {
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("test-capacity-1", "other-sc", layer0)},
			want:     []string{"delete test-capacity-1: SegmentGone"},
		},
		"ignore capacity with other manager": {
			existing: []*storagev1.CSIStorageCapacity{newCapacity("test-capacity-1", "other-sc", layer0, labeled(otherManager))},
		},
		"ignore capacity with no manager": {
			existing: []*storagev1.CSIStorageCapacity{newCapacity("test-capacity-1", "other-sc", layer0, labeled(nil))},
		},
		"two segments, two classes, four objects missing": {
			segments: segments(layer0, layer0other),
			classes:  []*storagev1.StorageClass{directSC, tripleSC},
			reports:  fourReports,
			want: []string{
				"create direct-sc {layer0=bar} 2Gi owner=StatefulSet/test-driver(controller)",
				"create direct-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)",
				"create triple-sc {layer0=bar} 6Gi owner=StatefulSet/test-driver(controller)",
				"create triple-sc {layer0=foo} 3Gi owner=StatefulSet/test-driver(controller)",
			},
		},
		"two segments, two classes, four objects updated": {
			segments: segments(layer0, layer0other),
			classes:  []*storagev1.StorageClass{directSC, tripleSC},
			existing: []*storagev1.CSIStorageCapacity{
				newCapacity("test-capacity-1", "direct-sc", layer0, available("1Mi")),
				newCapacity("test-capacity-2", "triple-sc", layer0, available("3Mi")),
				newCapacity("test-capacity-3", "direct-sc", layer0other, available("2Mi")),
				newCapacity("test-capacity-4", "triple-sc", layer0other, available("6Mi")),
			},
			reports: fourReports,
			want: []string{
				"update test-capacity-1: direct-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)",
				"update test-capacity-2: triple-sc {layer0=foo} 3Gi owner=StatefulSet/test-driver(controller)",
				"update test-capacity-3: direct-sc {layer0=bar} 2Gi owner=StatefulSet/test-driver(controller)",
				"update test-capacity-4: triple-sc {layer0=bar} 6Gi owner=StatefulSet/test-driver(controller)",
			},
		},
		"two segments, two classes, two added, two removed": {
			segments: segments(layer0, layer0other),
			classes:  []*storagev1.StorageClass{directSC, tripleSC},
			existing: []*storagev1.CSIStorageCapacity{
				newCapacity("test-capacity-1", "old-direct-sc", layer0, available("1Mi")),
				newCapacity("test-capacity-2", "old-triple-sc", layer0, available("3Mi")),
				newCapacity("test-capacity-3", "direct-sc", layer0other, available("2Mi")),
				newCapacity("test-capacity-4", "triple-sc", layer0other, available("6Mi")),
			},
			reports: fourReports,
			want: []string{
				"create direct-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)",
				"create triple-sc {layer0=foo} 3Gi owner=StatefulSet/test-driver(controller)",
				"update test-capacity-3: direct-sc {layer0=bar} 2Gi owner=StatefulSet/test-driver(controller)",
				"update test-capacity-4: triple-sc {layer0=bar} 6Gi owner=StatefulSet/test-driver(controller)",
				"delete test-capacity-1: StorageClassGone",
				"delete test-capacity-2: StorageClassGone",
			},
		},
		"delete redundant capacity": {
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "", nil)},
			want:     []string{"delete csisc-1: StorageClassGone"},
		},
		"ignore capacity after owner change: the unlabeled object stays, a new one is made": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "other-sc", layer0, labeled(nil))},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi"}),
			want:     []string{"create other-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"delete and recreate by someone: the wrong capacity is corrected": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("other-sc")},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "other-sc", layer0, available("1Mi"))},
			reports:  reports(reportEntry{"other-sc", layer0, "1Gi"}),
			want:     []string{"update csisc-1: other-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"add storage topology segment": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{immediateSC, lateSC},
			reports:  reports(reportEntry{"late-sc", layer0, "1Gi"}),
			want:     []string{"create late-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"add storage topology segment, immediate binding": {
			immediateBinding: true,
			segments:         segments(layer0),
			classes:          []*storagev1.StorageClass{immediateSC, lateSC},
			reports:          reports(reportEntry{"immediate-sc", layer0, "1Gi"}, reportEntry{"late-sc", layer0, "1Gi"}),
			want: []string{
				"create immediate-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)",
				"create late-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)",
			},
		},
		"remove storage topology segment": {
			classes:  []*storagev1.StorageClass{immediateSC, lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0)},
			want:     []string{"delete csisc-1: SegmentGone"},
		},
		"add and remove storage topology segment": {
			segments: segments(layer0other),
			classes:  []*storagev1.StorageClass{immediateSC, lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0)},
			reports:  reports(reportEntry{"late-sc", layer0other, "2Gi"}),
			want: []string{
				"create late-sc {layer0=bar} 2Gi owner=StatefulSet/test-driver(controller)",
				"delete csisc-1: SegmentGone",
			},
		},

		// Beyond upstream's cases.
		"a desired item without a report is asked for and its object kept": {
			segments: segments(layer0, layer0other),
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0, available("1Mi"))},
			want:     []string{"ask late-sc {layer0=bar}", "ask late-sc {layer0=foo}"},
		},
		"of two objects for one class and segment the older stays": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{
				newCapacity("csisc-a", "late-sc", layer0, createdAt(20)),
				newCapacity("csisc-b", "late-sc", layer0, createdAt(10), available("1Mi")),
			},
			reports: reports(reportEntry{"late-sc", layer0, "1Gi"}),
			want: []string{
				"update csisc-b: late-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)",
				"delete csisc-a: Duplicate",
			},
		},
		"duplicates go also before the driver has answered": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-a", "late-sc", layer0), newCapacity("csisc-b", "late-sc", layer0)},
			want:     []string{"ask late-sc {layer0=foo}", "delete csisc-b: Duplicate"},
		},
		"an object of a class of another driver goes": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("late-sc", ofDriver("other-driver"))},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0)},
			want:     []string{"delete csisc-1: StorageClassGone"},
		},
		"an object of a class that binds immediately goes unless such classes are tracked": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{immediateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "immediate-sc", layer0)},
			want:     []string{"delete csisc-1: StorageClassNotTracked"},
		},
		"a class without binding mode is tracked, as upstream": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{newClass("late-sc", func(c *storagev1.StorageClass) { c.VolumeBindingMode = nil })},
			want:     []string{"ask late-sc {layer0=foo}"},
		},
		"an object whose node topology is no segment goes": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{
				newCapacity("csisc-nil", "late-sc", nil, selecting(nil)),
				newCapacity("csisc-expr", "late-sc", nil, selecting(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "layer0", Operator: metav1.LabelSelectorOpIn, Values: []string{"foo"}}}})),
			},
			reports: reports(reportEntry{"late-sc", layer0, "1Gi"}),
			want: []string{
				"create late-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)",
				"delete csisc-expr: NodeTopologyIsNoSegment",
				"delete csisc-nil: NodeTopologyIsNoSegment",
			},
		},
		"a driver without topology has one object per class for all nodes": {
			segments: segments(map[string]string{}),
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", nil, available("1Mi"),
				selecting(&metav1.LabelSelector{}))},
			reports: reports(reportEntry{"late-sc", map[string]string{}, "1Gi"}),
			want:    []string{"update csisc-1: late-sc {} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"an object without capacity gets it": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0, func(c *storagev1.CSIStorageCapacity) { c.Capacity = nil })},
			reports:  reports(reportEntry{"late-sc", layer0, "1Gi"}),
			want:     []string{"update csisc-1: late-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"a maximum volume size the driver no longer reports is removed": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0, maxVolumeSize("1Mi"))},
			reports:  reports(reportEntry{"late-sc", layer0, "1Gi"}),
			want:     []string{"update csisc-1: late-sc {layer0=foo} 1Gi owner=StatefulSet/test-driver(controller)"},
		},
		"a stale controller reference is replaced, other owners stay": {
			segments: segments(layer0),
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0, ownerRefs(
				metav1.OwnerReference{Kind: "StatefulSet", Name: "old", UID: "old-uid", Controller: ptrTo(true)},
				metav1.OwnerReference{Kind: "ConfigMap", Name: "keep", UID: "cm-uid"}))},
			reports: reports(reportEntry{"late-sc", layer0, "1Gi"}),
			want:    []string{"update csisc-1: late-sc {layer0=foo} 1Gi owner=ConfigMap/keep owner=StatefulSet/test-driver(controller)"},
		},
		"objects with our labels in another namespace are not ours": {
			classes:  []*storagev1.StorageClass{lateSC},
			existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0, inNamespace("elsewhere"))},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := ourPolicy()
			p.ImmediateBinding = tc.immediateBinding
			if tc.noOwner {
				p.Owner = nil
			}
			existing := make([]*storagev1.CSIStorageCapacity, 0, len(tc.existing))
			for _, obj := range tc.existing {
				existing = append(existing, obj.DeepCopy())
			}

			got := describeResult(Plan(p, State{Segments: tc.segments, Classes: tc.classes, Existing: existing, Reports: tc.reports}))

			if !slices.Equal(got, tc.want) {
				t.Errorf("Plan decided\n  %q\nwant\n  %q", got, tc.want)
			}
			for i, obj := range existing {
				if !equalObjects(obj, tc.existing[i]) {
					t.Errorf("Plan changed its input %s", obj.Name)
				}
			}
		})
	}
}

func describeResult(r Result) []string {
	var out []string
	for _, it := range r.Unreported {
		out = append(out, fmt.Sprintf("ask %s %s", it.Class.Name, it.Segment))
	}
	for _, obj := range r.Create {
		if obj.GenerateName != generateName || obj.Name != "" || obj.Namespace != namespace ||
			obj.Labels[DriverNameLabel] != driver || obj.Labels[ManagedByLabel] != DefaultManagedBy || len(obj.Labels) != 2 {
			out = append(out, fmt.Sprintf("create with wrong metadata %+v", obj.ObjectMeta))
		}
		out = append(out, "create "+describe(obj))
	}
	for _, obj := range r.Update {
		out = append(out, fmt.Sprintf("update %s: %s", obj.Name, describe(obj)))
	}
	for _, d := range r.Delete {
		out = append(out, fmt.Sprintf("delete %s: %s", d.Object.Name, d.Reason))
	}
	return out
}

func equalObjects(a, b *storagev1.CSIStorageCapacity) bool {
	return describe(a) == describe(b) && a.Name == b.Name && a.ResourceVersion == b.ResourceVersion
}

func TestResultKeys(t *testing.T) {
	r := Plan(ourPolicy(), State{
		Segments: segments(layer0, layer0other),
		Classes:  []*storagev1.StorageClass{newClass("late-sc")},
		Existing: []*storagev1.CSIStorageCapacity{newCapacity("csisc-1", "late-sc", layer0, available("1Mi")),
			newCapacity("csisc-2", "gone-sc", layer0)},
		Reports: reports(reportEntry{"late-sc", layer0, "1Gi"}),
	})
	want := []Key{{Class: "gone-sc", Segment: "layer0=foo"}, {Class: "late-sc", Segment: "layer0=bar"}, {Class: "late-sc", Segment: "layer0=foo"}}
	if got := r.Keys(); !slices.Equal(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
}
