package watchtest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/listwatch/listwatch/apiserve"
)

// Errors the Go methods of Server wrap, for errors.Is: the serving core's.
// The same failures reach HTTP clients as Status objects with the
// matching reason.
var (
	ErrNotFound      = apiserve.ErrNotFound      // reason NotFound, 404
	ErrAlreadyExists = apiserve.ErrAlreadyExists // reason AlreadyExists, 409
	ErrConflict      = apiserve.ErrConflict      // reason Conflict, 409: a stale resourceVersion
	ErrInvalid       = apiserve.ErrInvalid       // reason BadRequest (400) or Invalid (422)
)

func notFound(r resource, name string) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusNotFound, Reason: "NotFound",
		Message: fmt.Sprintf("%s %q not found", r.qualified(), name),
		Details: &apiserve.StatusDetails{Name: name, Group: r.Group, Kind: r.Resource},
	}
}

func alreadyExists(r resource, name string) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusConflict, Reason: "AlreadyExists",
		Message: fmt.Sprintf("%s %q already exists", r.qualified(), name),
		Details: &apiserve.StatusDetails{Name: name, Group: r.Group, Kind: r.Resource},
	}
}

func conflict(r resource, name string) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusConflict, Reason: "Conflict",
		Message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", r.qualified(), name),
		Details: &apiserve.StatusDetails{Name: name, Group: r.Group, Kind: r.Resource},
	}
}

// uidMismatch is the real server's 409 for an update whose metadata.uid
// names another incarnation of the object.
func uidMismatch(r resource, old *object, uid string) *apiserve.Error {
	key := "/registry/" + r.Resource + "/"
	if !r.BuiltIn {
		key = "/registry/" + r.Group + "/" + r.Resource + "/"
	}
	if old.namespace != "" {
		key += old.namespace + "/"
	}
	return &apiserve.Error{
		Code: http.StatusConflict, Reason: "Conflict",
		Message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: StorageError: invalid object, Code: 4, Key: %s%s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s", r.qualified(), old.name, key, old.name, uid, old.uid),
		Details: &apiserve.StatusDetails{Name: old.name, Group: r.Group, Kind: r.Resource},
	}
}

// missingUID is the real server's 409 for an apply whose metadata.uid
// names an object that no longer exists.
func missingUID(r resource, name, uid string) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusConflict, Reason: "Conflict",
		Message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: uid mismatch: the provided object specified uid %s, and no existing object was found", r.qualified(), name, uid),
		Details: &apiserve.StatusDetails{Name: name, Group: r.Group, Kind: r.Resource},
	}
}

func badRequest(format string, args ...any) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusBadRequest, Reason: "BadRequest", Message: fmt.Sprintf(format, args...)}
}

// unknownResource is the real server's answer for a path it has no handler
// for (fixture list-unknown-resource.json).
func unknownResource() *apiserve.Error {
	return &apiserve.Error{Code: http.StatusNotFound, Reason: "NotFound", Message: "the server could not find the requested resource", Details: &apiserve.StatusDetails{}}
}

func methodNotAllowed() *apiserve.Error {
	return &apiserve.Error{Code: http.StatusMethodNotAllowed, Reason: "MethodNotAllowed", Message: "the server does not allow this method on the requested resource", Details: &apiserve.StatusDetails{}}
}

func invalidObject(r resource, name, field, detail string) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusUnprocessableEntity, Reason: "Invalid",
		Message: fmt.Sprintf("%s %q is invalid: %s: %s", r.Kind, name, field, detail),
		Details: &apiserve.StatusDetails{Name: name, Group: r.Group, Kind: r.Kind, Causes: []apiserve.StatusCause{{Reason: "FieldValueInvalid", Message: detail, Field: field}}},
	}
}

// expired is a 410 for a list or watch from a resourceVersion that history
// no longer holds.
func expired(what string) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusGone, Reason: "Expired", Message: "The resourceVersion for the provided " + what + " is too old."}
}

// expiredContinue is the 410 for a continue token older than the
// compaction, with a token that continues from the same key at the latest
// version (fixture list-expired-continue.json).
func expiredContinue(fresh string) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusGone, Reason: "Expired", Continue: fresh,
		Message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
	}
}

// tooLarge is the 504 for a resourceVersion the server has not reached
// (fixture list-rv-too-large.json).
func tooLarge(want, have int64) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusGatewayTimeout, Reason: "Timeout",
		Message: fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, have),
		Details: &apiserve.StatusDetails{Causes: []apiserve.StatusCause{{Reason: "ResourceVersionTooLarge", Message: "Too large resource version"}}, RetryAfterSeconds: 1},
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
func invalidListOptions(errs []fieldError) *apiserve.Error {
	d := &apiserve.StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions"}
	msgs := make([]string, len(errs))
	for i, f := range errs {
		reason, msg := f.detail()
		d.Causes = append(d.Causes, apiserve.StatusCause{Reason: reason, Message: msg, Field: f.field})
		msgs[i] = f.field + ": " + msg
	}
	all := msgs[0]
	if len(msgs) > 1 {
		all = "[" + strings.Join(msgs, ", ") + "]"
	}
	return &apiserve.Error{Code: http.StatusUnprocessableEntity, Reason: "Invalid", Message: `ListOptions.meta.k8s.io "" is invalid: ` + all, Details: d}
}

// failureError builds the Status an injected Failure answers with.
func failureError(f Failure, verb string) *apiserve.Error {
	e := &apiserve.Error{Code: f.Code, Reason: f.Reason, Message: f.Message}
	if e.Reason == "" || e.Message == "" {
		reason, message := defaultStatus(f.Code, verb)
		if e.Reason == "" {
			e.Reason = reason
		}
		if e.Message == "" {
			e.Message = message
		}
	}
	if f.RetryAfter > 0 {
		secs := int((f.RetryAfter + 999_999_999) / 1_000_000_000)
		e.Details = &apiserve.StatusDetails{RetryAfterSeconds: secs}
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
