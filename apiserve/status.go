package apiserve

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// Errors an Error is, for errors.Is, by its reason.
var (
	ErrNotFound      = errors.New("not found")      // reason NotFound, 404
	ErrAlreadyExists = errors.New("already exists") // reason AlreadyExists, 409
	ErrConflict      = errors.New("conflict")       // reason Conflict, 409: a stale resourceVersion
	ErrInvalid       = errors.New("invalid")        // reason BadRequest (400) or Invalid (422)
)

// Error is a failure on its way to becoming the metav1.Status the real
// server answers with.
type Error struct {
	Code    int
	Reason  string
	Message string
	Details *StatusDetails
	// Continue is the fresh continue token a 410 for an expired one
	// carries in its metadata.
	Continue string
}

// Status is a metav1.Status as the real server writes it; the field order
// is the server's.
type Status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   StatusMeta     `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Details    *StatusDetails `json:"details,omitempty"`
	Code       int            `json:"code"`
}

// StatusMeta is a Status's list metadata.
type StatusMeta struct {
	Continue string `json:"continue,omitempty"`
}

// StatusDetails are a Status's details.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int           `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one cause of a Status.
type StatusCause struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Is reports whether e is one of the errors above, by its reason.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Reason == "NotFound"
	case ErrAlreadyExists:
		return e.Reason == "AlreadyExists"
	case ErrConflict:
		return e.Reason == "Conflict"
	case ErrInvalid:
		return e.Reason == "BadRequest" || e.Reason == "Invalid"
	}
	return false
}

// Status is e as the Status object the real server sends.
func (e *Error) Status() Status {
	return Status{
		Kind: "Status", APIVersion: "v1", Metadata: StatusMeta{Continue: e.Continue},
		Status: "Failure", Message: e.Message, Reason: e.Reason, Details: e.Details, Code: e.Code,
	}
}

// RetryAfter is the Retry-After e asks for, in seconds; 0 for none.
func (e *Error) RetryAfter() int {
	if e.Details == nil {
		return 0
	}
	return e.Details.RetryAfterSeconds
}

// Write answers with e as a Status object, and its Retry-After.
func (e *Error) Write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	if s := e.RetryAfter(); s > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	w.WriteHeader(e.Code)
	_ = json.NewEncoder(w).Encode(e.Status()) // a struct of strings and ints
}

// AsError turns any error into the Status the server would send: an
// Error as it is, anything else a 500 InternalError.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: http.StatusInternalServerError, Reason: "InternalError", Message: "Internal error occurred: " + err.Error()}
}
