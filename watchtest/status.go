package watchtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Errors the Go methods of Server wrap, for errors.Is. The same failures
// reach HTTP clients as Status objects with the matching reason.
var (
	ErrNotFound      = errors.New("not found")      // reason NotFound, 404
	ErrAlreadyExists = errors.New("already exists") // reason AlreadyExists, 409
	ErrConflict      = errors.New("conflict")       // reason Conflict, 409: a stale resourceVersion
	ErrInvalid       = errors.New("invalid")        // reason BadRequest (400) or Invalid (422)
)

// status is a metav1.Status as the real server writes it; the field order
// is the server's.
type status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   statusMeta     `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Details    *statusDetails `json:"details,omitempty"`
	Code       int            `json:"code"`
}

type statusMeta struct {
	Continue string `json:"continue,omitempty"`
}

type statusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []statusCause `json:"causes,omitempty"`
	RetryAfterSeconds int           `json:"retryAfterSeconds,omitempty"`
}

type statusCause struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// apiError is a failure on its way to becoming a Status response.
type apiError struct {
	code          int
	reason        string
	message       string
	details       *statusDetails
	freshContinue string // a fresh continue token for an expired one
}

func (e *apiError) Error() string { return e.message }

func (e *apiError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.reason == "NotFound"
	case ErrAlreadyExists:
		return e.reason == "AlreadyExists"
	case ErrConflict:
		return e.reason == "Conflict"
	case ErrInvalid:
		return e.reason == "BadRequest" || e.reason == "Invalid"
	}
	return false
}

func (e *apiError) status() status {
	return status{
		Kind: "Status", APIVersion: "v1", Metadata: statusMeta{Continue: e.freshContinue},
		Status: "Failure", Message: e.message, Reason: e.reason, Details: e.details, Code: e.code,
	}
}

func (e *apiError) retryAfter() int {
	if e.details == nil {
		return 0
	}
	return e.details.RetryAfterSeconds
}

// writeStatus answers the request with e as a Status object.
func writeStatus(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	if s := e.retryAfter(); s > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	w.WriteHeader(e.code)
	_ = json.NewEncoder(w).Encode(e.status())
}

// asAPIError turns any error into the Status the server would send.
func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return &apiError{code: http.StatusInternalServerError, reason: "InternalError", message: "Internal error occurred: " + err.Error()}
}

func notFound(r resource, name string) *apiError {
	return &apiError{
		code: http.StatusNotFound, reason: "NotFound",
		message: fmt.Sprintf("%s %q not found", r.qualified(), name),
		details: &statusDetails{Name: name, Group: r.Group, Kind: r.Resource},
	}
}

func alreadyExists(r resource, name string) *apiError {
	return &apiError{
		code: http.StatusConflict, reason: "AlreadyExists",
		message: fmt.Sprintf("%s %q already exists", r.qualified(), name),
		details: &statusDetails{Name: name, Group: r.Group, Kind: r.Resource},
	}
}

func conflict(r resource, name string) *apiError {
	return &apiError{
		code: http.StatusConflict, reason: "Conflict",
		message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", r.qualified(), name),
		details: &statusDetails{Name: name, Group: r.Group, Kind: r.Resource},
	}
}

// uidMismatch is the real server's 409 for an update whose metadata.uid
// names another incarnation of the object.
func uidMismatch(r resource, old *object, uid string) *apiError {
	key := "/registry/" + r.Resource + "/"
	if !r.BuiltIn {
		key = "/registry/" + r.Group + "/" + r.Resource + "/"
	}
	if old.namespace != "" {
		key += old.namespace + "/"
	}
	return &apiError{
		code: http.StatusConflict, reason: "Conflict",
		message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: StorageError: invalid object, Code: 4, Key: %s%s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s", r.qualified(), old.name, key, old.name, uid, old.uid),
		details: &statusDetails{Name: old.name, Group: r.Group, Kind: r.Resource},
	}
}

// missingUID is the real server's 409 for an apply whose metadata.uid
// names an object that no longer exists.
func missingUID(r resource, name, uid string) *apiError {
	return &apiError{
		code: http.StatusConflict, reason: "Conflict",
		message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: uid mismatch: the provided object specified uid %s, and no existing object was found", r.qualified(), name, uid),
		details: &statusDetails{Name: name, Group: r.Group, Kind: r.Resource},
	}
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: http.StatusBadRequest, reason: "BadRequest", message: fmt.Sprintf(format, args...)}
}

// unknownResource is the real server's answer for a path it has no handler
// for (fixture list-unknown-resource.json).
func unknownResource() *apiError {
	return &apiError{code: http.StatusNotFound, reason: "NotFound", message: "the server could not find the requested resource", details: &statusDetails{}}
}

func methodNotAllowed() *apiError {
	return &apiError{code: http.StatusMethodNotAllowed, reason: "MethodNotAllowed", message: "the server does not allow this method on the requested resource", details: &statusDetails{}}
}

func invalidObject(r resource, name, field, detail string) *apiError {
	return &apiError{
		code: http.StatusUnprocessableEntity, reason: "Invalid",
		message: fmt.Sprintf("%s %q is invalid: %s: %s", r.Kind, name, field, detail),
		details: &statusDetails{Name: name, Group: r.Group, Kind: r.Kind, Causes: []statusCause{{Reason: "FieldValueInvalid", Message: detail, Field: field}}},
	}
}

// expired is a 410 for a list or watch from a resourceVersion that history
// no longer holds.
func expired(what string) *apiError {
	return &apiError{code: http.StatusGone, reason: "Expired", message: "The resourceVersion for the provided " + what + " is too old."}
}

// expiredContinue is the 410 for a continue token older than the
// compaction, with a token that continues from the same key at the latest
// version (fixture list-expired-continue.json).
func expiredContinue(fresh string) *apiError {
	return &apiError{
		code: http.StatusGone, reason: "Expired", freshContinue: fresh,
		message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
	}
}

// tooLarge is the 504 for a resourceVersion the server has not reached
// (fixture list-rv-too-large.json).
func tooLarge(want, have int64) *apiError {
	return &apiError{
		code: http.StatusGatewayTimeout, reason: "Timeout",
		message: fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, have),
		details: &statusDetails{Causes: []statusCause{{Reason: "ResourceVersionTooLarge", Message: "Too large resource version"}}, RetryAfterSeconds: 1},
	}
}

// fieldError is one entry of a 422 Invalid answer about query parameters.
type fieldError struct {
	field   string
	forbid  string   // the detail of a Forbidden error
	value   string   // for an unsupported value: the value given
	allowed []string // for an unsupported value: what is supported
}

func (f fieldError) detail() (reason, message string) {
	if f.allowed == nil {
		return "FieldValueForbidden", "Forbidden: " + f.forbid
	}
	quoted := make([]string, len(f.allowed))
	for i, a := range f.allowed {
		quoted[i] = strconv.Quote(a)
	}
	return "FieldValueNotSupported", fmt.Sprintf("Unsupported value: %q: supported values: %s", f.value, strings.Join(quoted, ", "))
}

// invalidListOptions is the 422 the real server sends for query parameters
// that contradict each other.
func invalidListOptions(errs []fieldError) *apiError {
	d := &statusDetails{Group: "meta.k8s.io", Kind: "ListOptions"}
	msgs := make([]string, len(errs))
	for i, f := range errs {
		reason, msg := f.detail()
		d.Causes = append(d.Causes, statusCause{Reason: reason, Message: msg, Field: f.field})
		msgs[i] = f.field + ": " + msg
	}
	all := msgs[0]
	if len(msgs) > 1 {
		all = "[" + strings.Join(msgs, ", ") + "]"
	}
	return &apiError{code: http.StatusUnprocessableEntity, reason: "Invalid", message: `ListOptions.meta.k8s.io "" is invalid: ` + all, details: d}
}

// failureError builds the Status an injected Failure answers with.
func failureError(f Failure, verb string) *apiError {
	e := &apiError{code: f.Code, reason: f.Reason, message: f.Message}
	if e.reason == "" || e.message == "" {
		reason, message := defaultStatus(f.Code, verb)
		if e.reason == "" {
			e.reason = reason
		}
		if e.message == "" {
			e.message = message
		}
	}
	if f.RetryAfter > 0 {
		secs := int((f.RetryAfter + 999_999_999) / 1_000_000_000)
		e.details = &statusDetails{RetryAfterSeconds: secs}
	}
	return e
}

func defaultStatus(code int, verb string) (reason, message string) {
	switch code {
	case http.StatusBadRequest:
		return "BadRequest", "the request is not valid"
	case http.StatusUnauthorized:
		return "Unauthorized", "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden", "forbidden: injected by watchtest"
	case http.StatusNotFound:
		return "NotFound", "the server could not find the requested resource"
	case http.StatusConflict:
		return "Conflict", "Operation cannot be fulfilled: injected by watchtest"
	case http.StatusGone:
		if verb == "watch" {
			return "Expired", "The resourceVersion for the provided watch is too old."
		}
		return "Expired", "The resourceVersion for the provided list is too old."
	case http.StatusTooManyRequests:
		return "TooManyRequests", "Too many requests, please try again later."
	case http.StatusInternalServerError:
		return "InternalError", "Internal error occurred: injected by watchtest"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailable", "The server is currently unable to handle the request"
	case http.StatusGatewayTimeout:
		return "Timeout", "Timeout: request did not complete within the allotted timeout"
	}
	return "", http.StatusText(code)
}
