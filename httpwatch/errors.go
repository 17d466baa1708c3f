package httpwatch

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/internal/redact"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/tidwall/gjson"
)

// StatusError is a failure the API server reported: a Status object in an
// error response or in a watch ERROR event, or an HTTP error status without
// one (then Reason is derived from the code, Message from the body).
type StatusError struct {
	Code    int
	Reason  string // "NotFound", "Expired", ...; "" if unknown
	Message string
	Details StatusDetails
	// RetryAfter is the server's advice (Retry-After header or
	// details.retryAfterSeconds), 0 if it gave none.
	RetryAfter time.Duration
	// Verb and Path name the request that failed: "GET", "WATCH", "POST"...
	// and the URL path.
	Verb, Path string
}

// StatusDetails is the details field of a Status.
type StatusDetails struct {
	Name, Group, Kind, UID string
	Causes                 []StatusCause
}

// StatusCause is one cause in StatusDetails.
type StatusCause struct {
	Reason, Message, Field string
}

func (e *StatusError) Error() string {
	var b strings.Builder
	if e.Verb != "" || e.Path != "" {
		fmt.Fprintf(&b, "%s %s: ", e.Verb, e.Path)
	}
	if e.Code != 0 {
		fmt.Fprintf(&b, "%d ", e.Code)
	}
	b.WriteString(cmp.Or(e.Reason, "error"))
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Request names the request e answers as the API server and RBAC do: its
// verb ("get", "patch", "watch", "deletecollection"...), its resource
// qualified by group and subresource ("configmaps",
// "deployments.apps/status") and its namespace ("" at cluster scope). A
// path outside resources has no resource, and Verb in lower case as its
// verb. The client's metrics name requests the same way (RequestInfo).
func (e *StatusError) Request() (verb, resource, namespace string) {
	return parseRequest(e.Verb, e.Path)
}

// reasonForCode is the Reason given to an error response that carries no
// Status, so that predicates keyed on reasons still work.
var reasonForCode = map[int]string{
	http.StatusBadRequest:            "BadRequest",
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusForbidden:             "Forbidden",
	http.StatusNotFound:              "NotFound",
	http.StatusMethodNotAllowed:      "MethodNotAllowed",
	http.StatusNotAcceptable:         "NotAcceptable",
	http.StatusConflict:              "Conflict",
	http.StatusGone:                  "Gone",
	http.StatusRequestEntityTooLarge: "RequestEntityTooLarge",
	http.StatusUnsupportedMediaType:  "UnsupportedMediaType",
	http.StatusUnprocessableEntity:   "Invalid",
	http.StatusTooManyRequests:       "TooManyRequests",
	http.StatusInternalServerError:   "InternalError",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
	http.StatusGatewayTimeout:        "Timeout",
}

// isStatus reports whether a JSON object is a meta/v1 Status.
func isStatus(body string) bool {
	r := gjson.GetMany(body, "kind", "apiVersion")
	if r[0].String() != "Status" {
		return false
	}
	switch r[1].String() {
	case "v1", "meta.k8s.io/v1":
		return true
	}
	return false
}

// statusFromJSON fills a StatusError from a Status object.
func statusFromJSON(body string) *StatusError {
	r := gjson.GetMany(body, "code", "reason", "message", "details")
	e := &StatusError{Code: int(r[0].Int()), Reason: r[1].String(), Message: r[2].String()}
	d := r[3]
	e.Details = StatusDetails{
		Name:  d.Get("name").String(),
		Group: d.Get("group").String(),
		Kind:  d.Get("kind").String(),
		UID:   d.Get("uid").String(),
	}
	d.Get("causes").ForEach(func(_, c gjson.Result) bool {
		e.Details.Causes = append(e.Details.Causes, StatusCause{
			Reason:  c.Get("reason").String(),
			Message: c.Get("message").String(),
			Field:   c.Get("field").String(),
		})
		return true
	})
	if s := d.Get("retryAfterSeconds"); s.Type == gjson.Number && s.Num > 0 {
		e.RetryAfter = retryAfterSeconds(int64(min(s.Num, maxRetryAfterSeconds)))
	}
	return e
}

// statusFromResponse turns a non-2xx response into a *StatusError. It reads
// (a bounded part of) the body; the caller closes it.
func statusFromResponse(verb, path string, resp *http.Response, now time.Time) *StatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, redact.BodyLimit))
	// A server or proxy may echo the request's credentials.
	body = []byte(redact.Secrets(string(body), nil))
	return statusFromBody(verb, path, resp.StatusCode, resp.Header, body, now)
}

// now is the time on the client's Clock, for a Retry-After date.
func statusFromBody(verb, path string, code int, h http.Header, body []byte, now time.Time) *StatusError {
	var e *StatusError
	// validJSON, unlike gjson.Valid, does not recurse: the body may be a
	// megabyte of '['.
	if raw.Validate(body) == nil && isStatus(string(body)) {
		e = statusFromJSON(string(body))
		if e.Code == 0 {
			e.Code = code
		}
	} else {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 512 {
			msg = msg[:512] + "..."
		}
		if msg == "" {
			msg = http.StatusText(code)
		}
		e = &StatusError{Code: code, Reason: reasonForCode[code], Message: msg}
	}
	if d, ok := parseRetryAfter(h.Get("Retry-After"), now); ok {
		e.RetryAfter = d
	}
	e.Verb, e.Path = verb, path
	return e
}

// maxRetryAfterSeconds is the longest advice a Duration holds. A server may
// send any number of digits; longer advice saturates here rather than
// overflowing into a negative or arbitrary wait. Callers cap it further.
const maxRetryAfterSeconds = math.MaxInt64 / 1_000_000_000 // nanoseconds per second

func retryAfterSeconds(s int64) time.Duration {
	return time.Duration(min(s, maxRetryAfterSeconds)) * time.Second
}

// parseRetryAfter reads a Retry-After header: whole seconds or an HTTP date,
// which is a wait from now. Anything else (a sign, a fraction, garbage) is
// no advice.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			s = maxRetryAfterSeconds // only digits: the error is ErrRange
		}
		return retryAfterSeconds(s), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func asStatus(err error) (*StatusError, bool) {
	var se *StatusError
	ok := errors.As(err, &se)
	return se, ok
}

// reasonOrCode is how the server's own predicates work: the reason decides
// when there is one; the code only when the reason is unknown.
func reasonOrCode(err error, reason string, code int) bool {
	se, ok := asStatus(err)
	return ok && (se.Reason == reason || (se.Reason == "" && se.Code == code))
}

// IsGone reports that a resourceVersion or continue token is no longer
// available: code 410 or reason Gone or Expired (upstream splits this into
// IsGone and IsResourceExpired, and callers check both).
func IsGone(err error) bool {
	se, ok := asStatus(err)
	return ok && (se.Code == http.StatusGone || se.Reason == "Gone" || se.Reason == "Expired")
}

// IsNotFound reports reason NotFound, or code 404 with no reason: the
// object is gone. A 404 that means the resource is not served, or is
// namespaced and was addressed without a namespace, is not accepted: its
// error wraps discovery.ErrUnknownResource or ErrNamespaceRequired instead.
func IsNotFound(err error) bool {
	return reasonOrCode(err, "NotFound", http.StatusNotFound) &&
		!errors.Is(err, discovery.ErrUnknownResource) && !errors.Is(err, ErrNamespaceRequired)
}

// IsConflict reports reason Conflict, or code 409 with no reason.
func IsConflict(err error) bool { return reasonOrCode(err, "Conflict", http.StatusConflict) }

// IsForbidden reports reason Forbidden, or code 403 with no reason.
func IsForbidden(err error) bool { return reasonOrCode(err, "Forbidden", http.StatusForbidden) }

// IsUnauthorized reports reason Unauthorized, or code 401 with no reason.
func IsUnauthorized(err error) bool {
	return reasonOrCode(err, "Unauthorized", http.StatusUnauthorized)
}

// IsInternalError reports reason InternalError, or code 500 with no reason.
func IsInternalError(err error) bool {
	return reasonOrCode(err, "InternalError", http.StatusInternalServerError)
}

// IsTooManyRequests reports reason TooManyRequests or code 429 (either
// suffices).
func IsTooManyRequests(err error) bool {
	se, ok := asStatus(err)
	return ok && (se.Reason == "TooManyRequests" || se.Code == http.StatusTooManyRequests)
}

// IsResourceVersionTooLarge reports that the server's cache has not yet seen
// the resourceVersion asked for: a cause with reason ResourceVersionTooLarge,
// or (older servers) reason Timeout with "Too large resource version" in a
// cause or the message. The cure is a list at resourceVersion "".
func IsResourceVersionTooLarge(err error) bool {
	se, ok := asStatus(err)
	if !ok {
		return false
	}
	for _, c := range se.Details.Causes {
		if c.Reason == "ResourceVersionTooLarge" {
			return true
		}
	}
	if se.Reason != "Timeout" {
		return false
	}
	const legacy = "Too large resource version"
	for _, c := range se.Details.Causes {
		if strings.Contains(c.Message, legacy) {
			return true
		}
	}
	return strings.Contains(se.Message, legacy)
}

// isConnectionRefused reports that nothing listened at the server's
// address, typically while it restarts: a write may be retried.
func isConnectionRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// IsProbableEOF reports a connection that ended or stalled rather than a
// server that refused: io.EOF, io.ErrUnexpectedEOF, a reset or closed
// connection, an HTTP/2 GOAWAY or stream reset, a connection given up as
// silent (ErrConnectionLost, ErrWatchIdle, ErrNoBookmarks), or a network
// timeout: for a watch, "resume it", whether Next or Watch returned it.
func IsProbableEOF(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrWatchIdle) || errors.Is(err, ErrNoBookmarks) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}

	msg := err.Error()
	for _, s := range []string{
		"connection reset by peer",
		"use of closed network connection",
		"server sent GOAWAY and closed the connection",
		"stream error:",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// DecodeError is a watch stream or list body that could not be decoded: bad
// JSON, an oversized frame, an event of unknown type. The stream is closed
// after one. (client-go turns these into a synthetic ERROR event with code
// 500; here they are an error from Watcher.Next or List.)
type DecodeError struct {
	Verb, Path string
	Offset     int64 // stream position where the problem was found
	Err        error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s %s: decode response at byte %d: %v", e.Verb, e.Path, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// errInvalidEventType is wrapped by the DecodeError for a watch event whose
// type is not one of the five the API defines (conformance 3).
var errInvalidEventType = errors.New("got invalid watch event type")

// unexpectedObject is the Err of an ERROR watch event whose object is not
// a Status (conformance 6); the event carries the object.
type unexpectedObject struct {
	Object *raw.Object
}

func (e *unexpectedObject) Error() string {
	return fmt.Sprintf("unexpected object in watch ERROR event: kind %q, apiVersion %q", e.Object.Kind(), e.Object.APIVersion())
}

// IsPermanent reports an error that retrying the same list or watch will not
// cure, so someone has to change the program, its configuration or the
// cluster: refused credentials (401) or a missing permission (403), a
// resource the server does not serve (404 on a collection,
// discovery.ErrUnknownResource, 405), a wrong request (400 such as an
// unsupported field label, 406, 415, 422, ErrNamespaceRequired), a server
// certificate that does not verify (an unknown authority, a name it does not
// carry, expired), an exec credential plugin that is not installed
// (kubeconfig.ErrExecPluginMissing). Informers still retry, so a fix heals
// them, but a wait can stop waiting and the log say so at Error. Timeouts,
// 5xx, 429, refused or cut connections and expired versions are not
// permanent; nor is a 404 on a single object, which means the object is
// gone (IsNotFound).
func IsPermanent(err error) bool {
	if errors.Is(err, discovery.ErrUnknownResource) || errors.Is(err, ErrNamespaceRequired) || certificateRefused(err) ||
		errors.Is(err, kubeconfig.ErrExecPluginMissing) {
		return true
	}
	se, ok := asStatus(err)
	if !ok {
		return false
	}
	switch se.Reason {
	case "Unauthorized", "Forbidden", "NotFound", "BadRequest", "Invalid",
		"MethodNotAllowed", "NotAcceptable", "UnsupportedMediaType":
		return true
	case "":
		switch se.Code {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
			http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable,
			http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
			return true
		}
	}
	return false
}

// certificateRefused reports a server certificate that failed
// verification. crypto/tls wraps every such failure in a
// CertificateVerificationError; the x509 errors are checked too for a
// transport that verifies on its own.
func certificateRefused(err error) bool {
	var verr *tls.CertificateVerificationError
	var uerr x509.UnknownAuthorityError
	var herr x509.HostnameError
	var cerr x509.CertificateInvalidError
	return errors.As(err, &verr) || errors.As(err, &uerr) || errors.As(err, &herr) || errors.As(err, &cerr)
}
