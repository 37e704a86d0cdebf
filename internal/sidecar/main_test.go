package sidecar

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// The snapshot fake clientset claims WatchList support but never sends
	// the bookmark that ends the initial list, so informers built on it
	// would never sync. Real API servers are not affected.
	os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	os.Exit(m.Run())
}
