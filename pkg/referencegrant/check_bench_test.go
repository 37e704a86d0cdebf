package referencegrant

import (
	"fmt"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// BenchmarkCheck shows that a check costs the same whatever the number of
// unrelated grants in the snapshot's namespace: it reads one index key.
func BenchmarkCheck(b *testing.B) {
	for _, unrelated := range []int{10, 1_000, 10_000} {
		b.Run(fmt.Sprintf("unrelated=%d", unrelated), func(b *testing.B) {
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers())
			for i := range unrelated {
				kind := []string{"Secret", "Service"}[i%2]
				g := grant(named(fmt.Sprintf("unrelated-%d", i)), claimsFromTest, to("", kind, ""))
				if err := indexer.Add(cached(g)); err != nil {
					b.Fatal(err)
				}
			}
			if err := indexer.Add(cached(grant(claimsFromTest, fooBackup))); err != nil {
				b.Fatal(err)
			}
			ref := claimUsesSnapshot()

			b.ReportAllocs()
			for b.Loop() {
				if d := check(indexer, ref); !d.Allowed {
					b.Fatalf("check() = %+v, want allowed", d)
				}
			}
		})
	}
}
