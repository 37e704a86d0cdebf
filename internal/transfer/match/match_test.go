package match

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	transferv1alpha1 "github.com/xns-csi/csi-provisioner/pkg/apis/transfer/v1alpha1"
)

const token = "c2VjcmV0LXRva2VuLTEyMzQ1Ng"

func newRequest(opts ...func(*transferv1alpha1.StorageTransferRequest)) *transferv1alpha1.StorageTransferRequest {
	r := &transferv1alpha1.StorageTransferRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "request-name", Namespace: "prod", UID: "r1"},
		Spec: transferv1alpha1.StorageTransferRequestSpec{
			Source:     transferv1alpha1.TransferSource{Kind: transferv1alpha1.KindVolumeSnapshot, Name: "foo"},
			AcceptName: "accept-name", TargetName: "bar", Token: token,
		},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

func newAccept(namespace string, opts ...func(*transferv1alpha1.StorageTransferAccept)) *transferv1alpha1.StorageTransferAccept {
	a := &transferv1alpha1.StorageTransferAccept{
		ObjectMeta: metav1.ObjectMeta{Name: "accept-name", Namespace: namespace, UID: types.UID("a-" + namespace)},
		Spec:       transferv1alpha1.StorageTransferAcceptSpec{SourceNamespace: "prod", RequestName: "request-name", RequestToken: token},
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

func withToken(t string) func(*transferv1alpha1.StorageTransferAccept) {
	return func(a *transferv1alpha1.StorageTransferAccept) { a.Spec.RequestToken = t }
}

func named(n string) func(*transferv1alpha1.StorageTransferAccept) {
	return func(a *transferv1alpha1.StorageTransferAccept) { a.Name = n }
}

func TestMatches(t *testing.T) {
	tests := map[string]struct {
		request *transferv1alpha1.StorageTransferRequest
		accept  *transferv1alpha1.StorageTransferAccept
		want    bool
	}{
		"the seed's example matches":                                {newRequest(), newAccept("test"), true},
		"another request name does not match":                       {newRequest(), newAccept("test", func(a *transferv1alpha1.StorageTransferAccept) { a.Spec.RequestName = "other" }), false},
		"another source namespace does not match":                   {newRequest(), newAccept("test", func(a *transferv1alpha1.StorageTransferAccept) { a.Spec.SourceNamespace = "dev" }), false},
		"an accept of another name does not match":                  {newRequest(), newAccept("test", named("other")), false},
		"a token that differs in its last character does not match": {newRequest(), newAccept("test", withToken(token[:len(token)-1]+"h")), false},
		"a prefix of the token does not match":                      {newRequest(), newAccept("test", withToken(token[:10])), false},
		"a request without token matches nothing, not even an empty quote": {
			newRequest(func(r *transferv1alpha1.StorageTransferRequest) { r.Spec.Token = "" }), newAccept("test", withToken("")), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Matches(tc.request, tc.accept); got != tc.want {
				t.Errorf("Matches() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	matched := func(r *transferv1alpha1.StorageTransferRequest) { r.Status.AcceptUID = "a-test" }
	tests := map[string]struct {
		request     *transferv1alpha1.StorageTransferRequest
		accepts     []*transferv1alpha1.StorageTransferAccept
		wantAccept  string
		wantRequest string
		wantAccepts map[string]string
	}{
		"no accept: the request waits": {
			request: newRequest(), wantRequest: ReasonWaitingForAccept, wantAccepts: map[string]string{}},
		"a request without token waits for it; its accept learns nothing": {
			request: newRequest(func(r *transferv1alpha1.StorageTransferRequest) { r.Spec.Token = "" }), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("test")},
			wantRequest: ReasonNoToken, wantAccepts: map[string]string{"test/accept-name": ReasonRequestNotFound}},
		"the matching accept is taken": {
			request: newRequest(), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("test")},
			wantAccept: "test/accept-name", wantRequest: ReasonMatched, wantAccepts: map[string]string{"test/accept-name": ReasonMatched}},
		"a wrong token is refused and the request keeps waiting": {
			request: newRequest(), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("test", withToken("bm90LXRoZS10b2tlbi1hdC1hbGw"))},
			wantRequest: ReasonWaitingForAccept, wantAccepts: map[string]string{"test/accept-name": ReasonRequestNotFound}},
		"without the token, an accept is told as if the request did not exist (issue 23 defect 12)": {
			request: newRequest(), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("test", named("other"), withToken("bm90LXRoZS10b2tlbi1hdC1hbGw"))},
			wantRequest: ReasonWaitingForAccept, wantAccepts: map[string]string{"test/other": ReasonRequestNotFound}},
		"an accept of another name than spec.acceptName is refused": {
			request: newRequest(), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("test", named("other"))},
			wantRequest: ReasonWaitingForAccept, wantAccepts: map[string]string{"test/other": ReasonAcceptNameMismatch}},
		"an accept naming another request is none of this request's business": {
			request: newRequest(), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("test", func(a *transferv1alpha1.StorageTransferAccept) { a.Spec.RequestName = "x" })},
			wantRequest: ReasonWaitingForAccept, wantAccepts: map[string]string{}},
		"a request for one namespace is not taken by an accept of another (issue 23 defect 11)": {
			request:     newRequest(func(r *transferv1alpha1.StorageTransferRequest) { r.Spec.TargetNamespace = "test" }),
			accepts:     []*transferv1alpha1.StorageTransferAccept{newAccept("dev")},
			wantRequest: ReasonWaitingForAccept, wantAccepts: map[string]string{"dev/accept-name": ReasonNamespaceMismatch}},
		"a request for the accept's namespace is taken": {
			request:    newRequest(func(r *transferv1alpha1.StorageTransferRequest) { r.Spec.TargetNamespace = "test" }),
			accepts:    []*transferv1alpha1.StorageTransferAccept{newAccept("test"), newAccept("dev")},
			wantAccept: "test/accept-name", wantRequest: ReasonMatched,
			wantAccepts: map[string]string{"test/accept-name": ReasonMatched, "dev/accept-name": ReasonNamespaceMismatch}},
		"an accept expecting another kind or name is not matched (issue 23 defect 8)": {
			request: newRequest(),
			accepts: []*transferv1alpha1.StorageTransferAccept{
				newAccept("test", func(a *transferv1alpha1.StorageTransferAccept) {
					a.Spec.Expect = &transferv1alpha1.TransferExpectation{Kind: transferv1alpha1.KindPersistentVolumeClaim, TargetName: "db-0"}
				})},
			wantRequest: ReasonWaitingForAccept, wantAccepts: map[string]string{"test/accept-name": ReasonNotExpected}},
		"matching accepts in two namespaces are both refused": {
			request: newRequest(), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("test"), newAccept("dev")},
			wantRequest: ReasonAmbiguous, wantAccepts: map[string]string{"test/accept-name": ReasonAmbiguous, "dev/accept-name": ReasonAmbiguous}},
		"a matched request keeps its accept and refuses a later one": {
			request: newRequest(matched), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("dev"), newAccept("test")},
			wantAccept: "test/accept-name", wantRequest: ReasonMatched, wantAccepts: map[string]string{"test/accept-name": ReasonMatched, "dev/accept-name": ReasonTakenByAnother}},
		"a matched request whose accept is gone matches no other": {
			request: newRequest(matched), accepts: []*transferv1alpha1.StorageTransferAccept{newAccept("dev")},
			wantRequest: ReasonWaitingForAccept, wantAccepts: map[string]string{"dev/accept-name": ReasonTakenByAnother}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Decide(tc.request, tc.accepts)
			gotAccept := ""
			if got.Accept != nil {
				gotAccept = got.Accept.Namespace + "/" + got.Accept.Name
			}
			if gotAccept != tc.wantAccept {
				t.Errorf("Accept = %q, want %q", gotAccept, tc.wantAccept)
			}
			if got.Request.Reason != tc.wantRequest || got.Request.Matched != (tc.wantRequest == ReasonMatched) {
				t.Errorf("Request = %+v, want reason %s", got.Request, tc.wantRequest)
			}
			if len(got.Accepts) != len(tc.wantAccepts) {
				t.Errorf("Accepts = %+v, want %v", got.Accepts, tc.wantAccepts)
			}
			for key, reason := range tc.wantAccepts {
				if got.Accepts[key].Reason != reason || got.Accepts[key].Message == "" {
					t.Errorf("Accepts[%s] = %+v, want reason %s and a message", key, got.Accepts[key], reason)
				}
			}
		})
	}
}

func TestNoVerdictQuotesTheToken(t *testing.T) {
	res := Decide(newRequest(), []*transferv1alpha1.StorageTransferAccept{newAccept("test"), newAccept("dev", withToken("bm90LXRoZS10b2tlbi1hdC1hbGw")), newAccept("x", named("y"))})
	for key, v := range res.Accepts {
		if contains(v.Message, token) {
			t.Errorf("The verdict of %s quotes the token: %q", key, v.Message)
		}
	}
	if contains(res.Request.Message, token) || contains(RequestNotFound(newAccept("test")).Message, token) {
		t.Error("A message quotes the token")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestDecideWithTokensFromSecrets: the tokens given, not the specs', are
// compared, and a token that could not be read is told by its verdict.
func TestDecideWithTokensFromSecrets(t *testing.T) {
	r := newRequest(func(r *transferv1alpha1.StorageTransferRequest) { r.Spec.Token = "" })
	a := newAccept("test", withToken(""))
	notFound := Verdict{Reason: ReasonTokenSecretNotFound, Message: "Secret test/t does not exist"}
	for _, tc := range []struct {
		name          string
		tokens        Tokens
		wantRequest   string
		wantAccept    string
		wantAcceptSet bool
	}{
		{name: "both read", tokens: Tokens{Request: token, Accepts: map[string]string{"test/accept-name": token}},
			wantRequest: ReasonMatched, wantAccept: ReasonMatched, wantAcceptSet: true},
		{name: "different tokens", tokens: Tokens{Request: token, Accepts: map[string]string{"test/accept-name": token + "x"}},
			wantRequest: ReasonWaitingForAccept, wantAccept: ReasonRequestNotFound},
		{name: "the accept's Secret missing", tokens: Tokens{Request: token, AcceptProblems: map[string]Verdict{"test/accept-name": notFound}},
			wantRequest: ReasonWaitingForAccept, wantAccept: ReasonTokenSecretNotFound},
		{name: "the request's Secret missing", tokens: Tokens{RequestProblem: &notFound, Accepts: map[string]string{"test/accept-name": token}},
			wantRequest: ReasonTokenSecretNotFound, wantAccept: ReasonRequestNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := DecideWith(r, []*transferv1alpha1.StorageTransferAccept{a}, tc.tokens)
			if res.Request.Reason != tc.wantRequest || res.Accepts["test/accept-name"].Reason != tc.wantAccept || (res.Accept != nil) != tc.wantAcceptSet {
				t.Errorf("DecideWith() = request %s, accept %s, matched %v; want %s, %s, %v", res.Request.Reason,
					res.Accepts["test/accept-name"].Reason, res.Accept != nil, tc.wantRequest, tc.wantAccept, tc.wantAcceptSet)
			}
			if res.Accept != nil && res.Accept != a {
				t.Error("The matched accept is not the one given")
			}
		})
	}
}
