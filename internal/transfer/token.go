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
	"k8s.io/apimachinery/pkg/types"

	"github.com/xns-csi/csi-provisioner/internal/transfer/match"
	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
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
// Secret that is missing, that the controller may not read, of another
// type or without a valid token gives a verdict that says so, never the
// Secret's content (nor its type: a tenant's type could be made too long
// for a condition's message).
func (c *Controller) secretToken(ctx context.Context, ns string, ref *transferv1alpha1.TokenSecretReference) (string, *match.Verdict, error) {
	s, err := c.cfg.Kube.CoreV1().Secrets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	field := fmt.Sprintf("Secret %s/%s", ns, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return "", &match.Verdict{Reason: match.ReasonTokenSecretNotFound, Message: field + " does not exist"}, nil
	case apierrors.IsForbidden(err):
		return "", &match.Verdict{Reason: match.ReasonTokenSecretForbidden,
			Message: fmt.Sprintf("the storage-transfer-controller may not read %s: bind the ClusterRole storage-transfer-controller-token-secrets to it in namespace %s (docs/transfer.md)", field, ns)}, nil
	case err != nil:
		return "", nil, fmt.Errorf("reading the token of %s: %w", field, err)
	case s.Type != transferv1alpha1.TokenSecretType:
		return "", &match.Verdict{Reason: match.ReasonTokenSecretInvalid,
			Message: fmt.Sprintf("%s is not of type %q", field, transferv1alpha1.TokenSecretType)}, nil
	}
	token := strings.TrimSuffix(string(s.Data[transferv1alpha1.TokenSecretKey]), "\n")
	if !tokenPattern.MatchString(token) {
		return "", &match.Verdict{Reason: match.ReasonTokenSecretInvalid,
			Message: fmt.Sprintf("%s must hold under the key %q a token of 22 to 128 base64url characters", field, transferv1alpha1.TokenSecretKey)}, nil
	}
	return token, nil, nil
}

// acceptSecret is what an accept's own sync last read of the Secret its
// spec.requestTokenSecretRef names.
type acceptSecret struct {
	uid     types.UID
	token   string
	problem *match.Verdict
}

// tokens are the tokens of r and the accepts that name it. The request's
// Secret is read now, until its transfer begins. An accept's Secret is
// read by the accept's own sync only, on its own schedule (syncAccept),
// and taken here as that sync last read it: how soon an accept's verdict
// follows a change of its Secret does not depend on whether the request
// it names exists. Once the transfer has begun (or ended), no Secret is
// read: the transfer keeps the accept it matched (match.Tokens.Pinned),
// and a withdrawal is the deletion of the request or the accept, as with
// tokens in specs, which cannot change.
func (c *Controller) tokens(ctx context.Context, r *transferv1alpha1.StorageTransferRequest, accepts []*transferv1alpha1.StorageTransferAccept) (match.Tokens, error) {
	t := match.SpecTokens(r, accepts)
	if r.Status.Record != nil || r.Status.Phase == transferv1alpha1.PhaseCompleted || r.Status.Phase == transferv1alpha1.PhaseFailed {
		t.Pinned = true
		return t, nil
	}
	if ref := r.Spec.TokenSecretRef; ref != nil {
		var err error
		if t.Request, t.RequestProblem, err = c.secretToken(ctx, r.Namespace, ref); err != nil {
			return t, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range accepts {
		if a.Spec.RequestTokenSecretRef == nil {
			continue
		}
		key := a.Namespace + "/" + a.Name
		read, ok := c.acceptSecrets[key]
		switch {
		case !ok || read.uid != a.UID:
			// Not read yet: neither matched nor told, until its sync has
			// read it (and queues this request).
			t.Unread = append(t.Unread, key)
		case read.problem != nil:
			t.AcceptProblems[key] = *read.problem
		default:
			t.Accepts[key] = read.token
		}
	}
	return t, nil
}

// readAcceptSecret reads the Secret a's spec.requestTokenSecretRef names
// and keeps what it read for the request's sync; it reports whether that
// changed.
func (c *Controller) readAcceptSecret(ctx context.Context, a *transferv1alpha1.StorageTransferAccept) (acceptSecret, bool, error) {
	token, problem, err := c.secretToken(ctx, a.Namespace, a.Spec.RequestTokenSecretRef)
	if err != nil {
		return acceptSecret{}, false, err
	}
	read := acceptSecret{uid: a.UID, token: token, problem: problem}
	key := a.Namespace + "/" + a.Name
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.acceptSecrets[key]
	c.acceptSecrets[key] = read
	return read, !ok || old.uid != read.uid || old.token != read.token || (old.problem == nil) != (problem == nil) ||
		old.problem != nil && *old.problem != *problem, nil
}

// forgetAcceptSecret drops what was read for the accept namespace/name.
func (c *Controller) forgetAcceptSecret(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.acceptSecrets, key)
}
