package capacity

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestMetrics checks upstream's gauges in upstream's "two segments, two
// classes, two added, two removed": after the first sweep (upstream's
// expectedObjectsPrepared) and once the objects are in line.
func TestMetrics(t *testing.T) {
	cluster := objects(nodeWith("node1", layer0), nodeWith("node2", layer0other),
		classes(newClass("direct-sc"), newClass("triple-sc", withParameters(map[string]string{"multiplier": "3"}))),
		capacityObjects(
			newCapacity("test-capacity-1", "old-direct-sc", layer0, available("1Mi")),
			newCapacity("test-capacity-2", "old-triple-sc", layer0, available("3Mi")),
			newCapacity("test-capacity-3", "direct-sc", layer0other, available("2Mi")),
			newCapacity("test-capacity-4", "triple-sc", layer0other, available("6Mi"))))

	t.Run("planned, nothing written yet", func(t *testing.T) {
		h := start(t, setup{capacity: fooAndBar, objects: cluster, workers: ptrTo(0)})
		h.waitForGauges(4, 2, 2)
	})
	t.Run("written", func(t *testing.T) {
		h := start(t, setup{capacity: fooAndBar, objects: cluster})
		h.waitIdle()
		h.waitForGauges(4, 4, 0)
	})
}

// waitForGauges waits until the gauges show the numbers: the controller
// may still be starting.
func (h *harness) waitForGauges(goal, current, obsolete int) {
	h.t.Helper()
	want := fmt.Sprintf(`# HELP csistoragecapacities_desired_current Number of CSIStorageCapacity objects that exist and are supposed to be managed automatically.
# TYPE csistoragecapacities_desired_current gauge
csistoragecapacities_desired_current %d
# HELP csistoragecapacities_desired_goal Number of CSIStorageCapacity objects that are supposed to be managed automatically.
# TYPE csistoragecapacities_desired_goal gauge
csistoragecapacities_desired_goal %d
# HELP csistoragecapacities_obsolete Number of CSIStorageCapacity objects that exist and will be deleted automatically. Objects that exist and may need an update are not considered obsolete and therefore not included in this value.
# TYPE csistoragecapacities_obsolete gauge
csistoragecapacities_obsolete %d
`, current, goal, obsolete)
	var last error
	err := wait.PollUntilContextTimeout(h.ctx, time.Millisecond, idleTimeout, true, func(context.Context) (bool, error) {
		last = testutil.GatherAndCompare(h.registry, strings.NewReader(want))
		return last == nil, nil
	})
	if err != nil {
		h.t.Fatalf("gauges: %v", last)
	}
}
