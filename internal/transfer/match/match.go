// Package match decides which StorageTransferAccept, if any, takes the
// object a StorageTransferRequest offers: the seed's four equalities
// (seed 002, "Design Details"), the token compared in constant time, and a
// reason and message for every accept that does not match. It does no I/O.
package match

import (
	"crypto/subtle"
	"fmt"
	"slices"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

// The reasons of a Matched condition. An accept that names a request gets
// one of them; so does the request.
const (
	// ReasonMatched: the request and the accept match.
	ReasonMatched = "Matched"
	// ReasonNoToken: the request has no token yet (told to the request
	// only).
	ReasonNoToken = "NoToken"
	// ReasonWaitingForAccept: no accept names the request.
	ReasonWaitingForAccept = "WaitingForAccept"
	// ReasonRequestNotFound: no request of that name in the namespace the
	// accept names has the accept's token (spec.sourceNamespace,
	// spec.requestName or spec.requestToken is wrong).
	ReasonRequestNotFound = "RequestNotFound"
	// ReasonAcceptNameMismatch: the request names another accept
	// (spec.acceptName).
	ReasonAcceptNameMismatch = "AcceptNameMismatch"
	// ReasonAmbiguous: accepts in several namespaces match the request;
	// none is taken until all but one are deleted.
	ReasonAmbiguous = "AmbiguousAccept"
	// ReasonTakenByAnother: the request is being transferred to another
	// accept.
	ReasonTakenByAnother = "TakenByAnotherAccept"
	// ReasonNamespaceMismatch: the request's spec.targetNamespace is
	// another namespace.
	ReasonNamespaceMismatch = "TargetNamespaceMismatch"
	// ReasonNotExpected: the request offers another kind or target name
	// than the accept's spec.expect.
	ReasonNotExpected = "NotExpected"
	// ReasonTokenSecretNotFound: the Secret that spec.tokenSecretRef (or
	// the accept's spec.requestTokenSecretRef) names does not exist.
	ReasonTokenSecretNotFound = "TokenSecretNotFound"
	// ReasonTokenSecretInvalid: that Secret is not of type
	// transfer.xns-csi.io/token or holds no valid token.
	ReasonTokenSecretInvalid = "TokenSecretInvalid"
	// ReasonTokenSecretForbidden: the controller may not read Secrets in
	// the namespace.
	ReasonTokenSecretForbidden = "TokenSecretForbidden"
)

// Tokens are the tokens a decision compares: the request's and each
// accept's (by namespace/name), from their specs or read from the
// Secrets their specs name. A token that could not be read is missing,
// with a verdict that says why.
type Tokens struct {
	Request string
	// RequestProblem, when set, says why the request has no token.
	RequestProblem *Verdict
	Accepts        map[string]string
	// AcceptProblems say why an accept has no token, by namespace/name.
	AcceptProblems map[string]Verdict
	// Unread are accepts (namespace/name) whose token is not known yet:
	// neither matched nor told.
	Unread []string
	// Pinned: the accept the request is pinned to (status.acceptUID)
	// matches without a comparison of tokens, as once its transfer has
	// begun.
	Pinned bool
}

// SpecTokens are the tokens in the specs of r and accepts.
func SpecTokens(r *transferv1alpha1.StorageTransferRequest, accepts []*transferv1alpha1.StorageTransferAccept) Tokens {
	t := Tokens{Request: r.Spec.Token, Accepts: make(map[string]string, len(accepts)), AcceptProblems: map[string]Verdict{}}
	for _, a := range accepts {
		t.Accepts[a.Namespace+"/"+a.Name] = a.Spec.RequestToken
	}
	return t
}

// expected reports whether request r offers what accept a's spec.expect
// agrees to (its kind and target name; the size is checked on the
// source, before the transfer begins).
func expected(r *transferv1alpha1.StorageTransferRequest, a *transferv1alpha1.StorageTransferAccept) bool {
	e := a.Spec.Expect
	return e == nil || (e.Kind == "" || e.Kind == r.Spec.Source.Kind) && (e.TargetName == "" || e.TargetName == r.Spec.TargetName)
}

// Matches reports whether request r and accept a satisfy the seed's four
// equalities. The tokens are compared in constant time, so the time a
// refusal takes tells nothing about the token; an empty token never
// matches.
func Matches(r *transferv1alpha1.StorageTransferRequest, a *transferv1alpha1.StorageTransferAccept) bool {
	return r.Name == a.Spec.RequestName &&
		r.Namespace == a.Spec.SourceNamespace &&
		r.Spec.AcceptName == a.Name &&
		tokenEqual(r.Spec.Token, a.Spec.RequestToken)
}

// tokenEqual compares two tokens in constant time (for equal lengths; the
// length of a token is no secret: 22 base64url characters).
func tokenEqual(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// Verdict is the decision for one object: a Matched condition's reason
// and message.
type Verdict struct {
	Matched bool
	Reason  string
	Message string
}

// Result is the decision for a request and the accepts that name it.
type Result struct {
	// Accept is the matching accept, nil when none (or several) match.
	Accept *transferv1alpha1.StorageTransferAccept
	// Request is the request's verdict.
	Request Verdict
	// Accepts are the verdicts of the accepts, by namespace/name.
	Accepts map[string]Verdict
}

// Decide matches request r against the accepts that name it (spec.
// sourceNamespace and spec.requestName: the controller's index). A request
// already matched (status.acceptUID) keeps its accept: any other is told
// the request is taken, and if its accept is gone, none matches.
func Decide(r *transferv1alpha1.StorageTransferRequest, accepts []*transferv1alpha1.StorageTransferAccept) Result {
	return DecideWith(r, accepts, SpecTokens(r, accepts))
}

// DecideWith is Decide with the tokens given: those of specs, or read
// from the Secrets they name.
func DecideWith(r *transferv1alpha1.StorageTransferRequest, accepts []*transferv1alpha1.StorageTransferAccept, tokens Tokens) Result {
	res := Result{Accepts: map[string]Verdict{}}
	var matching []*transferv1alpha1.StorageTransferAccept
	for _, a := range accepts {
		key := a.Namespace + "/" + a.Name
		problem, unreadable := tokens.AcceptProblems[key]
		pinned := tokens.Pinned && r.Status.AcceptUID != "" && string(a.UID) == r.Status.AcceptUID
		switch {
		case a.Spec.SourceNamespace != r.Namespace || a.Spec.RequestName != r.Name, slices.Contains(tokens.Unread, key):
			continue // names another request, or not known yet: not ours to tell
		case unreadable && !pinned:
			// The accept's own Secret: telling it says nothing of the
			// source namespace.
			res.Accepts[key] = problem
		case !pinned && !tokenEqual(tokens.Request, tokens.Accepts[key]):
			// Told exactly as a request that does not exist: who can
			// create an accept anywhere learns nothing about the source
			// namespace without the token (not whether the request exists,
			// nor its accept's name, nor whether it is taken).
			res.Accepts[key] = RequestNotFound(a)
		case r.Status.AcceptUID != "" && string(a.UID) != r.Status.AcceptUID:
			res.Accepts[key] = Verdict{Reason: ReasonTakenByAnother,
				Message: fmt.Sprintf("StorageTransferRequest %s/%s is being transferred to another StorageTransferAccept", r.Namespace, r.Name)}
		case r.Spec.AcceptName != a.Name:
			res.Accepts[key] = Verdict{Reason: ReasonAcceptNameMismatch,
				Message: fmt.Sprintf("StorageTransferRequest %s/%s names the accept %q, not %q: its spec.acceptName must name this accept", r.Namespace, r.Name, r.Spec.AcceptName, a.Name)}
		case r.Spec.TargetNamespace != "" && r.Spec.TargetNamespace != a.Namespace:
			res.Accepts[key] = Verdict{Reason: ReasonNamespaceMismatch,
				Message: fmt.Sprintf("StorageTransferRequest %s/%s may go only to namespace %q (its spec.targetNamespace)", r.Namespace, r.Name, r.Spec.TargetNamespace)}
		case !expected(r, a):
			res.Accepts[key] = Verdict{Reason: ReasonNotExpected,
				Message: fmt.Sprintf("StorageTransferRequest %s/%s offers %s %s as %q, which spec.expect does not agree to", r.Namespace, r.Name, r.Spec.Source.Kind, r.Spec.Source.Name, r.Spec.TargetName)}
		default:
			matching = append(matching, a)
		}
	}
	switch {
	case tokens.RequestProblem != nil:
		res.Request = *tokens.RequestProblem
	case tokens.Request == "" && !tokens.Pinned:
		res.Request = Verdict{Reason: ReasonNoToken, Message: "the controller has not set spec.token yet"}
	case len(matching) == 1:
		a := matching[0]
		res.Accept = a
		res.Request = Verdict{Matched: true, Reason: ReasonMatched,
			Message: fmt.Sprintf("StorageTransferAccept %s/%s matches", a.Namespace, a.Name)}
		res.Accepts[a.Namespace+"/"+a.Name] = Verdict{Matched: true, Reason: ReasonMatched,
			Message: fmt.Sprintf("matches StorageTransferRequest %s/%s", r.Namespace, r.Name)}
	case len(matching) > 1:
		res.Request = Verdict{Reason: ReasonAmbiguous,
			Message: fmt.Sprintf("%d StorageTransferAccepts named %q in different namespaces quote the token: delete all but one", len(matching), r.Spec.AcceptName)}
		for _, a := range matching {
			res.Accepts[a.Namespace+"/"+a.Name] = Verdict{Reason: ReasonAmbiguous,
				Message: fmt.Sprintf("StorageTransferAccepts in %d namespaces match StorageTransferRequest %s/%s: delete all but one", len(matching), r.Namespace, r.Name)}
		}
	case r.Status.AcceptUID != "":
		res.Request = Verdict{Reason: ReasonWaitingForAccept,
			Message: "the StorageTransferAccept this request matched is gone"}
	default:
		res.Request = Verdict{Reason: ReasonWaitingForAccept,
			Message: fmt.Sprintf("waiting for a StorageTransferAccept named %q with spec.sourceNamespace %q, spec.requestName %q and the request's token", r.Spec.AcceptName, r.Namespace, r.Name)}
	}
	return res
}

// RequestNotFound is the verdict for an accept whose request does not
// exist (e.g. the accept names the wrong namespace), or whose token is not
// the request's: the two are told alike.
func RequestNotFound(a *transferv1alpha1.StorageTransferAccept) Verdict {
	return Verdict{Reason: ReasonRequestNotFound,
		Message: fmt.Sprintf("no StorageTransferRequest %q in namespace %q has this token: check spec.sourceNamespace, spec.requestName and spec.requestToken (the request's spec.token)", a.Spec.RequestName, a.Spec.SourceNamespace)}
}
