package manifests

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// sidecarName is the name of the sidecar's Deployment and of its container.
const sidecarName = "csi-provisioner"

// deploymentDirs are the kustomizations that install the sidecar's
// Deployment; each test of this file checks what every one renders.
var deploymentDirs = []string{".", "csi-provisioner", "overlays/ha"}

// forEachSidecar runs check, as a subtest, on the sidecar's Deployment as
// each of deploymentDirs renders it.
func forEachSidecar(t *testing.T, check func(t *testing.T, d *appsv1.Deployment)) {
	t.Helper()
	for _, dir := range deploymentDirs {
		t.Run(dir, func(t *testing.T) {
			check(t, sidecarDeployment(t, kustomize(t, filepath.Join(deployDir, dir))))
		})
	}
}

// sidecarDeployment returns the sidecar's Deployment among manifests,
// failing t when there is none.
func sidecarDeployment(t *testing.T, manifests []manifest) *appsv1.Deployment {
	t.Helper()
	for _, m := range manifests {
		if d, ok := m.obj.(*appsv1.Deployment); ok && d.Name == sidecarName {
			return d
		}
	}
	t.Fatalf("No Deployment %s", sidecarName)
	return nil
}

// sidecarContainer returns the sidecar's container of d, failing t when
// there is none.
func sidecarContainer(t *testing.T, d *appsv1.Deployment) *v1.Container {
	t.Helper()
	containers := d.Spec.Template.Spec.Containers
	i := slices.IndexFunc(containers, func(c v1.Container) bool { return c.Name == sidecarName })
	if i < 0 {
		t.Fatalf("Deployment %s has no container %s", d.Name, sidecarName)
	}
	return &containers[i]
}

func TestEveryImageIsFullyQualifiedAndPinned(t *testing.T) {
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		for _, c := range d.Spec.Template.Spec.Containers {
			if problem := imageProblem(c.Image); problem != "" {
				t.Errorf("Container %s has image %q: %s", c.Name, c.Image, problem)
			}
		}
	})
}

func TestImageProblem(t *testing.T) {
	tests := map[string]struct {
		image string
		// problem is a substring of imageProblem's answer; empty: none.
		problem string
	}{
		"a registry, a path and a version tag are fine": {image: "ghcr.io/xns-csi/csi-provisioner:v0.1.0"},
		"a registry with a port is fine":                {image: "registry.example.com:5000/csi-provisioner:v1"},
		"a digest pins the image too":                   {image: "ghcr.io/xns-csi/csi-provisioner@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		"a short name resolves through the runtime's search registries": {
			image: "csi-provisioner:v0.1.0", problem: "registry",
		},
		"a Docker Hub user's name has no registry either": {image: "xns-csi/csi-provisioner:v0.1.0", problem: "registry"},
		"no tag means latest":                             {image: "ghcr.io/xns-csi/csi-provisioner", problem: "tag"},
		"latest moves":                                    {image: "ghcr.io/xns-csi/csi-provisioner:latest", problem: "latest"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := imageProblem(tc.image)
			switch {
			case tc.problem == "" && got != "":
				t.Errorf("imageProblem(%q) = %q, want none", tc.image, got)
			case tc.problem != "" && !strings.Contains(got, tc.problem):
				t.Errorf("imageProblem(%q) = %q, want one about %q", tc.image, got, tc.problem)
			}
		})
	}
}

// imageProblem says why image could resolve to another image than the one
// meant, or "" when it cannot: without a registry host a container runtime
// may try its search registries in turn (and Docker Hub, where anyone can
// claim the name), and without a tag or digest, or with "latest", the image
// changes under a running Deployment.
func imageProblem(image string) string {
	name, digest, pinned := strings.Cut(image, "@")
	if pinned && digest == "" {
		return "empty digest"
	}
	host, _, hasPath := strings.Cut(name, "/")
	if !hasPath || (!strings.ContainsAny(host, ".:") && host != "localhost") {
		return "no registry host: the runtime may pull it from another registry"
	}
	if pinned {
		return ""
	}
	repo, tag, tagged := "", "", false
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		repo, tag, tagged = name[:i], name[i+1:], true
	}
	switch {
	case !tagged || repo == "" || tag == "":
		return "no tag (which means latest) and no digest"
	case tag == "latest":
		return "tag latest changes under a running Deployment"
	}
	return ""
}

func TestSidecarProbes(t *testing.T) {
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		c := sidecarContainer(t, d)
		// One slow answer on a busy node must not take the only replica
		// out of rotation.
		if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
			t.Errorf("The readiness probe is %+v, want GET /readyz", p)
		} else if p.FailureThreshold < 3 {
			t.Errorf("The readiness probe has failureThreshold %d, want 3 or more", p.FailureThreshold)
		}
		// Leader election serves /healthz/leader-election (upstream's
		// liveness path), which restarts a leader stuck without its Lease.
		if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz/leader-election" {
			t.Errorf("The liveness probe is %+v, want GET /healthz/leader-election", p)
		}
		if !slices.ContainsFunc(c.Args, isLeaderElectionOn) {
			t.Errorf("The sidecar runs with %q, want --leader-election (the liveness probe's path needs it)", c.Args)
		}
	})
}

// isLeaderElectionOn tells whether the command-line argument arg turns
// leader election on.
func isLeaderElectionOn(arg string) bool {
	return arg == "--leader-election" || arg == "--leader-election=true"
}

func TestSidecarMemory(t *testing.T) {
	// docs/benchmarks.md ("Lean at cluster scale"): peak RSS 63 MiB at
	// 5,000 claims, snapshots and grants, 119 at 20,000, 228 at 50,000
	// (about 45 MiB plus 37 per 10,000 of each). The request covers 10,000
	// of each, the limit 50,000 of each by docs/deploying.md's rule (64 MiB
	// plus 40 per 10,000), and GOMEMLIMIT keeps the collector under it.
	request, limit := resource.MustParse("82Mi"), resource.MustParse("264Mi")
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		c := sidecarContainer(t, d)
		if got, ok := c.Resources.Requests[v1.ResourceMemory]; !ok || got.Cmp(request) < 0 {
			t.Errorf("The sidecar requests %s of memory, want at least %s", got.String(), request.String())
		}
		got, ok := c.Resources.Limits[v1.ResourceMemory]
		if !ok || got.Cmp(limit) < 0 {
			t.Errorf("The sidecar's memory limit is %s, want at least %s", got.String(), limit.String())
		}
		if r := c.Resources.Requests[v1.ResourceMemory]; ok && r.Cmp(got) > 0 {
			t.Errorf("The sidecar requests %s of memory, over its limit %s", r.String(), got.String())
		}
		checkGoMemLimit(t, c)
	})
}

// goMemLimitRoom is the least GOMEMLIMIT leaves under a container's memory
// limit: the runtime does not count the binary's code (30 MiB resident,
// docs/benchmarks.md), which the container's limit does.
var goMemLimitRoom = resource.MustParse("30Mi")

// checkGoMemLimit checks that c sets GOMEMLIMIT at least goMemLimitRoom
// under its memory limit, and not so far under it (a quarter) that the
// collector runs without need. A resourceFieldRef of limits.memory cannot
// leave that room: the value is a literal, kept in step with the limit.
func checkGoMemLimit(t *testing.T, c *v1.Container) {
	t.Helper()
	limit, ok := c.Resources.Limits[v1.ResourceMemory]
	if !ok {
		t.Errorf("%s has no memory limit for GOMEMLIMIT to stay under", c.Name)
		return
	}
	value := goMemLimit(t, c)
	n, err := parseGoMemLimit(value)
	if err != nil {
		t.Errorf("GOMEMLIMIT=%q: %v", value, err)
		return
	}
	if room := limit.Value() - n; room < goMemLimitRoom.Value() || room > limit.Value()/4 {
		t.Errorf("GOMEMLIMIT=%s is %d MiB under limits.memory %s; want from %s to a quarter of the limit",
			value, room>>20, limit.String(), goMemLimitRoom.String())
	}
}

// goMemLimit is the literal value of c's GOMEMLIMIT.
func goMemLimit(t *testing.T, c *v1.Container) string {
	t.Helper()
	i := slices.IndexFunc(c.Env, func(e v1.EnvVar) bool { return e.Name == "GOMEMLIMIT" })
	if i < 0 || c.Env[i].ValueFrom != nil || c.Env[i].Value == "" {
		t.Fatalf("env %+v, want GOMEMLIMIT with a value", c.Env)
	}
	return c.Env[i].Value
}

// parseGoMemLimit reads a GOMEMLIMIT as the Go runtime does: a byte count
// with an optional unit, B, KiB, MiB, GiB or TiB.
func parseGoMemLimit(value string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	for _, u := range units {
		if digits, ok := strings.CutSuffix(value, u.suffix); ok {
			n, err := strconv.ParseInt(digits, 10, 64)
			return n << u.shift, err
		}
	}
	return strconv.ParseInt(value, 10, 64)
}

func TestSidecarGetsItsPodFromTheDownwardAPI(t *testing.T) {
	// --enable-capacity needs NAMESPACE and POD_NAME, --node-deployment
	// NODE_NAME, as upstream's.
	want := map[string]string{"NAMESPACE": "metadata.namespace", "POD_NAME": "metadata.name", "NODE_NAME": "spec.nodeName"}
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		env := sidecarContainer(t, d).Env
		for name, field := range want {
			i := slices.IndexFunc(env, func(e v1.EnvVar) bool { return e.Name == name })
			if i < 0 {
				t.Errorf("The sidecar has no environment variable %s", name)
				continue
			}
			if from := env[i].ValueFrom; from == nil || from.FieldRef == nil || from.FieldRef.FieldPath != field {
				t.Errorf("The sidecar's %s is %+v, want the downward API's %s", name, env[i], field)
			}
		}
	})
}

func TestSidecarRunsAsNonRoot(t *testing.T) {
	forEachSidecar(t, func(t *testing.T, d *appsv1.Deployment) {
		sc := sidecarContainer(t, d).SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("The sidecar's securityContext is %+v, want runAsNonRoot", sc)
		}
	})
}

// TestImagesCanBeOverridden checks the override docs/deploying.md describes: a
// user's overlay with kustomize's `images:` replaces the sidecar's image,
// in every kustomization that installs it.
func TestImagesCanBeOverridden(t *testing.T) {
	for _, dir := range deploymentDirs {
		t.Run(dir, func(t *testing.T) {
			images := "images:\n  - name: ghcr.io/xns-csi/csi-provisioner\n    newName: registry.example.com/mirror/csi-provisioner\n    newTag: v0.1.1\n"
			c := sidecarContainer(t, sidecarDeployment(t, kustomizeOverlay(t, dir, images)))
			if want := "registry.example.com/mirror/csi-provisioner:v0.1.1"; c.Image != want {
				t.Errorf("With images: the sidecar's image is %q, want %q", c.Image, want)
			}
		})
	}
}
