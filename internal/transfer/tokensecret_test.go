package transfer

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	"github.com/xns-csi/csi-provisioner/internal/transfer/plan"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// tokenSecret is a Secret of namespace ns holding token as the transfer
// controller wants it.
func tokenSecret(ns, token string) *v1.Secret {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "transfer-token", Namespace: ns},
		Type: transferv1alpha1.TokenSecretType, Data: map[string][]byte{transferv1alpha1.TokenSecretKey: []byte(token)}}
}

// createSecretRefRequestAndAccept creates the seed's request for the claim
// prod/data and its accept in test, both naming the Secret transfer-token
// of their own namespace.
func (h *harness) createSecretRefRequestAndAccept() {
	h.t.Helper()
	ref := &transferv1alpha1.TokenSecretReference{Name: "transfer-token"}
	r := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1"},
		Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindPersistentVolumeClaim, Name: "data"},
			AcceptName: "accept-name", TargetName: "bar", TokenSecretRef: ref},
	}
	if _, err := h.api.TransferV1alpha1().StorageTransferRequests("prod").Create(h.ctx, r, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "test", UID: "a1"},
		Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestTokenSecretRef: ref}}
	if _, err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Create(h.ctx, a, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// matchedReason is the reason of the Matched condition of the request
// (namespace "" for it) or of the accept test/accept-name.
func (h *harness) matchedReason(ofAccept bool) string {
	var conds []metav1.Condition
	if ofAccept {
		a, err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Get(h.ctx, "accept-name", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		conds = a.Status.Conditions
	} else if r := h.request(); r != nil {
		conds = r.Status.Conditions
	}
	if c := meta.FindStatusCondition(conds, transferv1alpha1.ConditionMatched); c != nil {
		return c.Reason
	}
	return ""
}

// TestTokensKeptInSecretsTransferAClaim (issue 23 defect 11): the request
// and the accept name Secrets of their own namespaces instead of quoting
// the token; the claim is transferred, the controller writes no token into
// the request's spec and tells it in no event.
func TestTokensKeptInSecretsTransferAClaim(t *testing.T) {
	h := newHarness(t, append(boundClaim(), tokenSecret("prod", testToken+"\n"), tokenSecret("test", testToken)), nil)
	h.createSecretRefRequestAndAccept()
	var token string
	h.waitFor("the request to be deleted after the transfer", func() bool {
		if r := h.request(); r != nil {
			token = r.Spec.Token
			return false
		}
		return true
	})
	if token != "" {
		t.Errorf("The controller wrote spec.token = %q into a request whose token is in a Secret", token)
	}
	if target, err := h.kube.CoreV1().PersistentVolumeClaims("test").Get(h.ctx, "bar", metav1.GetOptions{}); err != nil || target.Spec.VolumeName != "pv-1" {
		t.Fatalf("Target claim = %+v, %v; want test/bar naming pv-1", target, err)
	}
	checkNoEventQuotesTheToken(t, h.eventsSoFar())
}

// TestATokenSecretThatCannotServeIsToldAndChangesNothing (issue 23 defect
// 11): a request whose Secret is missing, of another type, holds no valid
// token, or may not be read is told why in its Matched condition, without
// the Secret's content; the claim stays where it is.
func TestATokenSecretThatCannotServeIsToldAndChangesNothing(t *testing.T) {
	wrongType := tokenSecret("prod", testToken)
	wrongType.Type = v1.SecretTypeOpaque
	for _, tc := range []struct {
		name    string
		secret  *v1.Secret // in prod
		forbid  bool
		reason  string
		noQuote string
	}{
		{name: "missing", reason: match.ReasonTokenSecretNotFound},
		{name: "of another type", secret: wrongType, reason: match.ReasonTokenSecretInvalid, noQuote: testToken},
		{name: "a short token", secret: tokenSecret("prod", "hunter2"), reason: match.ReasonTokenSecretInvalid, noQuote: "hunter2"},
		{name: "not base64url", secret: tokenSecret("prod", testToken+"!"), reason: match.ReasonTokenSecretInvalid, noQuote: testToken},
		{name: "may not be read", secret: tokenSecret("prod", testToken), forbid: true, reason: match.ReasonTokenSecretForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := append(boundClaim(), tokenSecret("test", testToken))
			if tc.secret != nil {
				objs = append(objs, tc.secret)
			}
			h := newHarness(t, objs, nil)
			if tc.forbid {
				forbid := func(a clienttesting.Action) error {
					if a.GetNamespace() == "prod" && a.GetResource().Resource == "secrets" {
						return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "transfer-token", nil)
					}
					return nil
				}
				h.fault.Store(&forbid)
			}
			h.createSecretRefRequestAndAccept()
			h.waitFor(tc.reason, func() bool { return h.matchedReason(false) == tc.reason })
			if r := h.request(); r.Status.Record != nil || r.Status.AcceptUID != "" {
				t.Errorf("Request status = %+v, want no match and nothing begun", r.Status)
			}
			if _, err := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(h.ctx, "data", metav1.GetOptions{}); err != nil {
				t.Errorf("The source claim: %v, want it kept", err)
			}
			if tc.noQuote != "" {
				r := h.request()
				for _, c := range r.Status.Conditions {
					if c.Message != "" && strings.Contains(c.Message, tc.noQuote) {
						t.Errorf("Condition %s quotes the Secret's content: %q", c.Type, c.Message)
					}
				}
				for _, e := range h.eventsSoFar() {
					if strings.Contains(e, tc.noQuote) {
						t.Errorf("An event quotes the Secret's content: %q", e)
					}
				}
			}
		})
	}
}

// TestAnAcceptsSecretIsToldAlikeWhetherOrNotItsRequestExists (issue 23
// defect 11): an accept whose own Secret is missing is told so the same
// way whether the request it names exists or not, so an accept with a
// missing Secret is no oracle for requests of another namespace.
func TestAnAcceptsSecretIsToldAlikeWhetherOrNotItsRequestExists(t *testing.T) {
	reasons := map[bool]string{}
	for _, requestExists := range []bool{true, false} {
		h := newHarness(t, boundClaim(), nil)
		if requestExists {
			r := &transferv1alpha1.StorageTransferRequest{ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1"},
				Spec: transferv1alpha1.StorageTransferRequestSpec{Source: transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindPersistentVolumeClaim, Name: "data"},
					AcceptName: "accept-name", TargetName: "bar", Token: testToken}}
			if _, err := h.api.TransferV1alpha1().StorageTransferRequests("prod").Create(h.ctx, r, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		a := &transferv1alpha1.StorageTransferAccept{ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: "test", UID: "a1"},
			Spec: transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name",
				RequestTokenSecretRef: &transferv1alpha1.TokenSecretReference{Name: "transfer-token"}}}
		if _, err := h.api.TransferV1alpha1().StorageTransferAccepts("test").Create(h.ctx, a, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.waitFor("the accept's verdict", func() bool { return h.matchedReason(true) != "" })
		reasons[requestExists] = h.matchedReason(true)
		h.stop()
	}
	if reasons[true] != match.ReasonTokenSecretNotFound || reasons[false] != reasons[true] {
		t.Errorf("Accept told %q when its request exists, %q when not; want %q for both", reasons[true], reasons[false], match.ReasonTokenSecretNotFound)
	}
}

// TestDeletingTheTokenSecretWithdrawsTheOffer (issue 23 defect 11): while
// the transfer waits before it begins (a pod uses the claim), the request's
// owner deletes the Secret: the request no longer matches, and the claim
// stays when the pod goes.
func TestDeletingTheTokenSecretWithdrawsTheOffer(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-0", Namespace: "prod"}, Status: v1.PodStatus{Phase: v1.PodRunning},
		Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	h := newHarness(t, append(boundClaim(), pod, tokenSecret("prod", testToken), tokenSecret("test", testToken)), nil)
	h.createSecretRefRequestAndAccept()
	h.waitFor("SourceInUse", func() bool { return h.transferredReason() == plan.ReasonSourceInUse })
	if err := h.kube.CoreV1().Secrets("prod").Delete(h.ctx, "transfer-token", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Secrets are not watched: the pod's going is what wakes the request.
	if err := h.kube.CoreV1().Pods("prod").Delete(h.ctx, "app-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(match.ReasonTokenSecretNotFound, func() bool { return h.matchedReason(false) == match.ReasonTokenSecretNotFound })
	if r := h.request(); r.Status.Record != nil {
		t.Errorf("Record = %+v, want no transfer begun", r.Status.Record)
	}
	if _, err := h.kube.CoreV1().PersistentVolumeClaims("prod").Get(h.ctx, "data", metav1.GetOptions{}); err != nil {
		t.Errorf("The source claim: %v, want it kept", err)
	}
}

// TestAForbiddenTokenSecretIsAVerdict (issue 23 defect 11): a Secret the
// controller may not read is told as such, naming the role to bind.
func TestAForbiddenTokenSecretIsAVerdict(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "transfer-token", nil)
	c := unstarted(t, nil, []runtime.Object{}...)
	c.cfg.Kube.(interface {
		PrependReactor(verb, resource string, reaction clienttesting.ReactionFunc)
	}).PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	ref := &transferv1alpha1.TokenSecretReference{Name: "transfer-token"}
	if _, v, err := c.secretToken(t.Context(), "prod", ref); err != nil || v == nil || v.Reason != match.ReasonTokenSecretForbidden ||
		!strings.Contains(v.Message, "storage-transfer-controller-token-secrets") {
		t.Errorf("Verdict %+v, err %v; want %s naming the ClusterRole to bind", v, err, match.ReasonTokenSecretForbidden)
	}
}
