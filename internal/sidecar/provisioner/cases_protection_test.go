package provisioner

import (
	"testing"

	"github.com/xns-csi/csi-provisioner/internal/shared/datasource"
)

// Source protection with the upstream csi-provisioner's RBAC, which allows
// "update" but not "patch" on claims and snapshots, and with neither.

func TestSourceProtectionWithUpstreamRBAC(t *testing.T) {
	prodSnap, prodContent := snapshot("prod")
	src, srcPV := boundClaim()
	const (
		patchRefused = protectProdSnapshot + " → Forbidden"
		unprotected  = "event Warning SourceProtectionForbidden VolumeSnapshot prod/snap is not protected from deletion while the volume is made from it: " +
			`this sidecar may not patch or update VolumeSnapshot prod/snap: grant it "patch" (or "get" and "update") on volumesnapshots.snapshot.storage.k8s.io ` +
			`(volumesnapshots.snapshot.storage.k8s.io is forbidden: RBAC: access denied); provisioning continues without the protection`
	)
	runFramework(t, []frameworkCase{
		{
			name:      "a snapshot is protected with an update when patching is forbidden",
			forbidden: []string{"patch volumesnapshots"},
			objects:   objects(ours(restoring("prod", "snap")), prodSnap, prodContent, grant()),
			steps:     []step{provision("test/data", created)},
			want:      []string{patchRefused, "update volumesnapshots", createFromProd, provisioned},
		},
		{
			name:      "a clone source is protected with an update when patching is forbidden",
			forbidden: []string{"patch persistentvolumeclaims"},
			objects:   objects(ours(cloning("test", "src")), src, srcPV),
			steps:     []step{provision("test/data", created)},
			want: []string{"patch persistentvolumeclaims test/src: add /metadata/finalizers [" + datasource.CloneFinalizer + "] → Forbidden",
				"update persistentvolumeclaims", create + " from volume vol-src", provisioned},
		},
		{
			// Upstream logs and restores without its finalizer; here the
			// claim is told once, on its first attempt.
			name:      "with neither patch nor update the restore goes on unprotected, and the claim is told once",
			forbidden: []string{"patch volumesnapshots", "update volumesnapshots"},
			objects:   objects(ours(restoring("prod", "snap")), prodSnap, prodContent, grant()),
			steps:     []step{provision("test/data", invalid), provision("test/data", created)},
			want: []string{patchRefused, "update volumesnapshots → Forbidden",
				createFromProd + " → InvalidArgument", "provision test/data: Finished, CSI InvalidArgument", unprotected,
				patchRefused, "update volumesnapshots → Forbidden", createFromProd, provisioned},
		},
	})
}
