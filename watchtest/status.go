package watchtest

import (
	"fmt"
	"net/http"

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

func invalidObject(r resource, name, field, detail string) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusUnprocessableEntity, Reason: "Invalid",
		Message: fmt.Sprintf("%s %q is invalid: %s: %s", r.Kind, name, field, detail),
		Details: &apiserve.StatusDetails{Name: name, Group: r.Group, Kind: r.Kind, Causes: []apiserve.StatusCause{{Reason: "FieldValueInvalid", Message: detail, Field: field}}},
	}
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
