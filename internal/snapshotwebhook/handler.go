package snapshotwebhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// The reasons of HTTP errors, the metrics' reason label with result error.
const (
	// errorOverloaded is a request over the Limits, answered 429.
	errorOverloaded  = "overloaded"
	errorMethod      = "method"
	errorContentType = "content-type"
	errorTooLarge    = "too-large"
	errorBadReview   = "bad-review"
)

// Handler serves admission.k8s.io/v1 AdmissionReviews of snapshot objects
// with an Admitter's decisions.
type Handler struct {
	Admitter *Admitter
	// Metrics counts the requests; none when nil.
	Metrics *Metrics
	// now is the clock of the latency metric; time.Now when nil.
	now func() time.Time
	// limits holds requests to the Limits NewHandler was given; nil holds
	// them to none.
	limits *limiter
	// maxBody bounds one request's body; DefaultLimits' when 0.
	maxBody int64
}

// ServeHTTP answers one AdmissionReview. A body that is not one gets an
// HTTP error: without the request's uid there is no response to give, and
// kube-apiserver then applies the webhook's failurePolicy.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := h.now
	if now == nil {
		now = time.Now
	}
	start := now()
	logger := klog.FromContext(r.Context())
	fail := func(code int, reason string, err error) {
		logger.Error(err, "Cannot answer an admission request", "reason", reason, "remote", r.RemoteAddr)
		http.Error(w, err.Error(), code)
		h.Metrics.observe(otherResource, "", resultError, reason, now().Sub(start))
	}
	if r.Method != http.MethodPost {
		fail(http.StatusMethodNotAllowed, errorMethod, errors.New("only POST is served"))
		return
	}
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		fail(http.StatusUnsupportedMediaType, errorContentType, errors.New("the content type must be application/json"))
		return
	}
	maxBody := h.maxBody
	if maxBody == 0 {
		maxBody = DefaultLimits().MaxBodyBytes
	}
	if r.ContentLength > maxBody {
		fail(http.StatusRequestEntityTooLarge, errorTooLarge, fmt.Errorf("the body of %d bytes is over the limit of %d", r.ContentLength, maxBody))
		return
	}
	overloaded := func() {
		// Not an error of the webhook's: a burst or a flood. The count
		// tells; the log would flood with it.
		logger.V(2).Info("Too many admission requests in flight", "remote", r.RemoteAddr, "contentLength", r.ContentLength)
		http.Error(w, errOverloaded.Error(), http.StatusTooManyRequests)
		h.Metrics.observe(otherResource, "", resultError, errorOverloaded, now().Sub(start))
	}
	body, releaseBytes, err := h.limits.readBody(http.MaxBytesReader(w, r.Body, maxBody), r.ContentLength)
	defer releaseBytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.Is(err, errOverloaded):
			overloaded()
		case errors.As(err, &tooLarge):
			fail(http.StatusRequestEntityTooLarge, errorTooLarge, err)
		default:
			fail(http.StatusBadRequest, errorBadReview, err)
		}
		return
	}
	releaseSlot, ok := h.limits.slot()
	if !ok {
		overloaded()
		return
	}
	defer releaseSlot()
	review, err := decodeReview(body)
	if err != nil {
		fail(http.StatusBadRequest, errorBadReview, err)
		return
	}
	req := review.Request
	v := h.Admitter.Admit(req)
	name := req.Name
	if name == "" {
		name = "(generated)"
	}
	review.Response = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: v.allowed(), Result: v.status(name)}
	review.Request = nil
	out, err := json.Marshal(review)
	if err != nil {
		fail(http.StatusInternalServerError, errorBadReview, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(out); err != nil {
		logger.V(2).Info("Cannot write an admission response", "err", err, "remote", r.RemoteAddr)
	}
	result := resultAllowed
	if !v.allowed() {
		result = resultDenied
	}
	h.Metrics.observe(v.resource, req.Operation, result, v.metricReason(), now().Sub(start))
	h.log(logger, req, v)
}

// log logs a denial, and why a request was allowed without a decision.
func (h *Handler) log(logger klog.Logger, req *admissionv1.AdmissionRequest, v verdict) {
	object := klog.KRef(req.Namespace, req.Name)
	switch {
	case !v.allowed():
		logger.Info("Denied", "resource", req.Resource.Resource, "object", object, "operation", req.Operation,
			"user", req.UserInfo.Username, "reason", v.status(req.Name).Message)
	case v.reason == reasonUndecodable || v.reason == reasonClassesUnavailable || v.reason == reasonRestoresUnknown:
		logger.Info("Allowed without a decision", "resource", req.Resource.Resource, "object", object,
			"operation", req.Operation, "reason", v.reason, "err", v.cause)
	default:
		logger.V(5).Info("Allowed", "resource", req.Resource.Resource, "object", object, "operation", req.Operation)
	}
}

// decodeReview decodes an admission.k8s.io/v1 AdmissionReview with a
// request, the only version the webhook is registered for.
func decodeReview(body []byte) (*admissionv1.AdmissionReview, error) {
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(body, review); err != nil {
		return nil, err
	}
	want := metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"}
	if review.TypeMeta != want {
		return nil, errors.New("not an admission.k8s.io/v1 AdmissionReview: register the webhook with admissionReviewVersions [v1]")
	}
	if review.Request == nil {
		return nil, errors.New("the AdmissionReview has no request")
	}
	return review, nil
}
