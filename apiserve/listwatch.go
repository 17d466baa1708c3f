package apiserve

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The list and watch protocol as the real server speaks it: which
// parameters go together, the failures it answers with, and its continue
// tokens.

var supportedMatch = []string{"Exact", "NotOlderThan", ""}

// CheckListOptions applies the real server's rules for the parameters of
// a list (resourceVersion, resourceVersionMatch, continue, and whether
// sendInitialEvents was given), answering its 422 when they contradict
// each other.
func CheckListOptions(rv, match, cont string, initial *bool) *Error {
	return invalidListOptions(listOptionErrors(rv, match, cont, initial))
}

func listOptionErrors(rv, match, cont string, initial *bool) []fieldError {
	var errs []fieldError
	if match != "" {
		if rv == "" {
			errs = append(errs, fieldError{field: "resourceVersionMatch", forbid: "resourceVersionMatch is forbidden unless resourceVersion is provided"})
		}
		if cont != "" {
			errs = append(errs, fieldError{field: "resourceVersionMatch", forbid: "resourceVersionMatch is forbidden when continue is provided"})
		}
		if match != "Exact" && match != "NotOlderThan" {
			errs = append(errs, fieldError{field: "resourceVersionMatch", value: match, allowed: supportedMatch})
		}
		if match == "Exact" && rv == "0" {
			errs = append(errs, fieldError{field: "resourceVersionMatch", forbid: `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`})
		}
	}
	if initial != nil {
		errs = append(errs, fieldError{field: "sendInitialEvents", forbid: "sendInitialEvents is forbidden for list"})
	}
	return errs
}

// CheckWatchOptions applies the real server's rules for the parameters of
// a watch, answering its 422 when they contradict each other. refuse
// plays a server without the WatchList feature.
func CheckWatchOptions(match, cont string, initial *bool, refuse bool) *Error {
	return invalidListOptions(watchOptionErrors(match, cont, initial, refuse))
}

func watchOptionErrors(match, cont string, initial *bool, refuse bool) []fieldError {
	var errs []fieldError
	if initial != nil {
		if match != "NotOlderThan" {
			errs = append(errs, fieldError{field: "resourceVersionMatch", forbid: "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"})
		}
		if refuse {
			errs = append(errs, fieldError{field: "sendInitialEvents", forbid: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"})
		}
	}
	if match != "" {
		if initial == nil {
			errs = append(errs, fieldError{field: "resourceVersionMatch", forbid: "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"})
		}
		if match != "NotOlderThan" {
			errs = append(errs, fieldError{field: "resourceVersionMatch", value: match, allowed: []string{"NotOlderThan"}})
		}
	}
	if cont != "" {
		// So the real server words it, match or not.
		errs = append(errs, fieldError{field: "resourceVersionMatch", forbid: "resourceVersionMatch is forbidden when continue is provided"})
	}
	return errs
}

// UnknownResource is the real server's answer for a path it has no handler
// for (fixture list-unknown-resource.json).
func UnknownResource() *Error {
	return &Error{Code: http.StatusNotFound, Reason: "NotFound", Message: "the server could not find the requested resource", Details: &StatusDetails{}}
}

// MethodNotAllowed is the real server's 405 for a verb a path does not
// take.
func MethodNotAllowed() *Error {
	return &Error{Code: http.StatusMethodNotAllowed, Reason: "MethodNotAllowed", Message: "the server does not allow this method on the requested resource", Details: &StatusDetails{}}
}

// Expired is a 410 for a list or watch from a resourceVersion that history
// no longer holds.
func Expired(what string) *Error {
	return &Error{Code: http.StatusGone, Reason: "Expired", Message: "The resourceVersion for the provided " + what + " is too old."}
}

// ExpiredContinue is the 410 for a continue token older than the
// compaction, with a token that continues from the same key at the latest
// version (fixture list-expired-continue.json).
func ExpiredContinue(fresh string) *Error {
	return &Error{
		Code: http.StatusGone, Reason: "Expired", Continue: fresh,
		Message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
	}
}

// TooLarge is the 504 for a resourceVersion the server has not reached
// (fixture list-rv-too-large.json).
func TooLarge(want, have int64) *Error {
	return &Error{
		Code: http.StatusGatewayTimeout, Reason: "Timeout",
		Message: fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, have),
		Details: &StatusDetails{Causes: []StatusCause{{Reason: "ResourceVersionTooLarge", Message: "Too large resource version"}}, RetryAfterSeconds: 1},
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
func invalidListOptions(errs []fieldError) *Error {
	if len(errs) == 0 {
		return nil
	}
	d := &StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions"}
	msgs := make([]string, len(errs))
	for i, f := range errs {
		reason, msg := f.detail()
		d.Causes = append(d.Causes, StatusCause{Reason: reason, Message: msg, Field: f.field})
		msgs[i] = f.field + ": " + msg
	}
	all := msgs[0]
	if len(msgs) > 1 {
		all = "[" + strings.Join(msgs, ", ") + "]"
	}
	return &Error{Code: http.StatusUnprocessableEntity, Reason: "Invalid", Message: `ListOptions.meta.k8s.io "" is invalid: ` + all, Details: d}
}

// ContinueToken is the opaque continue parameter: the resourceVersion of
// the list's snapshot and the key to go on from. The layout follows the
// real server's, so tokens look alike in logs.
type ContinueToken struct {
	V     string `json:"v"`
	RV    int64  `json:"rv"` // -1: go on at the latest version (after expiry)
	Start string `json:"start"`
}

const tokenVersion = "meta.k8s.io/v1"

func EncodeContinue(rv int64, start string) string {
	b, _ := json.Marshal(ContinueToken{V: tokenVersion, RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

func DecodeContinue(s string) (ContinueToken, error) {
	var t ContinueToken
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		var padded error
		if raw, padded = base64.URLEncoding.DecodeString(s); padded != nil {
			return t, err
		}
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, errors.New("not a JSON token")
	}
	if t.V != tokenVersion {
		return t, errors.New("unknown token version " + strconv.Quote(t.V))
	}
	if t.RV < -1 || t.RV == 0 {
		return t, errors.New("bad resourceVersion in token")
	}
	return t, nil
}
