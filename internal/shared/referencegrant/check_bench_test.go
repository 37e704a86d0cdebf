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

// BenchmarkToCached measures what the cache keeps of one grant: everything
// the transform allocates is kept, so B/op is the bytes cached per grant
// (beyond the informer's own key and index entries).
func BenchmarkToCached(b *testing.B) {
	rg := v1Grant(grant(claimsFromTest, fooBackup))
	rg.UID, rg.ResourceVersion, rg.Generation = "8a3f0c4e-5b1d-4f6a-9c2e-7d8b9a0e1f23", "123456", 1
	b.ReportAllocs()
	for b.Loop() {
		if _, err := toCached(rg); err != nil {
			b.Fatal(err)
		}
	}
}
