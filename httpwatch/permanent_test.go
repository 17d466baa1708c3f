package httpwatch

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/listwatch/listwatch/discovery"
	"github.com/stretchr/testify/assert"
)

func TestIsPermanent(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"401", &StatusError{Code: 401, Reason: "Unauthorized"}, true},
		{"403", &StatusError{Code: 403, Reason: "Forbidden"}, true},
		{"404 on a collection", &StatusError{Code: 404, Reason: "NotFound"}, true},
		{"unsupported field label", &StatusError{Code: 400, Reason: "BadRequest", Message: "field label not supported: spec.nodename"}, true},
		{"422", &StatusError{Code: 422, Reason: "Invalid"}, true},
		{"422 without a reason", &StatusError{Code: 422}, true},
		{"405", &StatusError{Code: 405, Reason: "MethodNotAllowed"}, true},
		{"unknown resource", fmt.Errorf("list configmap: %w", discovery.ErrUnknownResource), true},
		{"namespace required", fmt.Errorf("get: %w", ErrNamespaceRequired), true},
		{"wrapped 403", fmt.Errorf("list: %w", &StatusError{Code: 403}), true},
		{"410", &StatusError{Code: 410, Reason: "Expired"}, false},
		{"429", &StatusError{Code: 429, Reason: "TooManyRequests"}, false},
		{"500", &StatusError{Code: 500, Reason: "InternalError"}, false},
		{"503", &StatusError{Code: 503, Reason: "ServiceUnavailable"}, false},
		{"504 too large version", &StatusError{Code: 504, Reason: "Timeout"}, false},
		{"conflict", &StatusError{Code: 409, Reason: "Conflict"}, false},
		{"a 400 reason on a 5xx code decides by reason", &StatusError{Code: 500, Reason: "BadRequest"}, true},
		{"refused connection", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), false},
		{"cut stream", io.ErrUnexpectedEOF, false},
		{"deadline", context.DeadlineExceeded, false},
		{"nil", nil, false},
	} {
		assert.Equal(t, tc.want, IsPermanent(tc.err), tc.name)
	}
}
