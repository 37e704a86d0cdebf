package transfer

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
	"github.com/xns-csi/csi-provisioner/pkg/transfer/match"
)

// tokenBytes is the size of a request token: 128 bits (seed 002 wants it
// unguessable; the CRD requires at least 22 base64url characters).
const tokenBytes = 16

// newToken returns a new request token: tokenBytes from crypto/rand,
// base64url without padding. Never log it.
func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading a random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// tokenPattern is what a token must be: the CRD's rule for spec.token.
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{22,128}$`)

// secretToken reads the token of the Secret ref names in namespace ns. A
// Secret that is missing, of another type or without a valid token gives
// a verdict that says so, never the Secret's content. So does one the
// controller may not read, unless begun: then the transfer waits (err)
// rather than take a refused read for a withdrawal.
func (c *Controller) secretToken(ctx context.Context, ns string, ref *transferv1alpha1.TokenSecretReference, begun bool) (string, *match.Verdict, error) {
	s, err := c.cfg.Kube.CoreV1().Secrets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	field := fmt.Sprintf("Secret %s/%s", ns, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return "", &match.Verdict{Reason: match.ReasonTokenSecretNotFound, Message: field + " does not exist"}, nil
	case apierrors.IsForbidden(err) && !begun:
		return "", &match.Verdict{Reason: match.ReasonTokenSecretForbidden,
			Message: fmt.Sprintf("the storage-transfer-controller may not read %s: bind the ClusterRole storage-transfer-controller-token-secrets to it in namespace %s (docs/transfer.md)", field, ns)}, nil
	case err != nil:
		return "", nil, fmt.Errorf("reading the token of %s: %w", field, err)
	case s.Type != transferv1alpha1.TokenSecretType:
		return "", &match.Verdict{Reason: match.ReasonTokenSecretInvalid,
			Message: fmt.Sprintf("%s is of type %q, not %q", field, s.Type, transferv1alpha1.TokenSecretType)}, nil
	}
	token := strings.TrimSuffix(string(s.Data[transferv1alpha1.TokenSecretKey]), "\n")
	if !tokenPattern.MatchString(token) {
		return "", &match.Verdict{Reason: match.ReasonTokenSecretInvalid,
			Message: fmt.Sprintf("%s must hold under the key %q a token of 22 to 128 base64url characters", field, transferv1alpha1.TokenSecretKey)}, nil
	}
	return token, nil, nil
}

// tokens are the tokens of r and the accepts that name it, read from
// their specs or the Secrets their specs name.
func (c *Controller) tokens(ctx context.Context, r *transferv1alpha1.StorageTransferRequest, accepts []*transferv1alpha1.StorageTransferAccept) (match.Tokens, error) {
	t := match.SpecTokens(r, accepts)
	begun := r.Status.Record != nil
	if ref := r.Spec.TokenSecretRef; ref != nil {
		var err error
		if t.Request, t.RequestProblem, err = c.secretToken(ctx, r.Namespace, ref, begun); err != nil {
			return t, err
		}
	}
	for _, a := range accepts {
		token, problem, err := c.acceptToken(ctx, a, begun && string(a.UID) == r.Status.AcceptUID)
		if err != nil {
			return t, err
		}
		key := a.Namespace + "/" + a.Name
		t.Accepts[key] = token
		if problem != nil {
			if t.AcceptProblems == nil {
				t.AcceptProblems = map[string]match.Verdict{}
			}
			t.AcceptProblems[key] = *problem
		}
	}
	return t, nil
}

// acceptToken is the token a quotes: its spec.requestToken or the token
// in the Secret its spec.requestTokenSecretRef names.
func (c *Controller) acceptToken(ctx context.Context, a *transferv1alpha1.StorageTransferAccept, begun bool) (string, *match.Verdict, error) {
	if ref := a.Spec.RequestTokenSecretRef; ref != nil {
		return c.secretToken(ctx, a.Namespace, ref, begun)
	}
	return a.Spec.RequestToken, nil, nil
}
