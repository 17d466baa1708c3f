package cli_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/httpwatch"
)

func TestExplain(t *testing.T) {
	status := func(code int, reason string) error {
		return fmt.Errorf("list pods: %w", &httpwatch.StatusError{Code: code, Reason: reason, Verb: "LIST", Path: "/api/v1/pods"})
	}
	other := errors.New("something else")
	for name, tc := range map[string]struct {
		err     error
		want    string
		wrapped bool // the original error is still there for errors.Is
	}{
		"401":                {status(401, "Unauthorized"), "the server at https://k:6443 did not accept the credentials (401 Unauthorized): check --token, --token-file or the kubeconfig user", false},
		"403":                {status(403, "Forbidden"), "not allowed (403 Forbidden): the user or service account needs get, list and watch on the resource: list pods: LIST /api/v1/pods: 403 Forbidden", true},
		"404":                {status(404, ""), "the server has no such resource (404 NotFound); check its plural, version and group: list pods: LIST /api/v1/pods: 404 error", true},
		"connection refused": {fmt.Errorf("dial: %w", syscall.ECONNREFUSED), "cannot reach the server at https://k:6443: dial: connection refused", true},
		"timed out":          {fmt.Errorf("interrupted before the first sync: %w", context.DeadlineExceeded), "cannot reach the server at https://k:6443: interrupted before the first sync: context deadline exceeded", true},
		"anything else":      {other, "something else", true},
	} {
		t.Run(name, func(t *testing.T) {
			got := cli.Explain(tc.err, "https://k:6443")
			assert.Equal(t, tc.want, got.Error())
			assert.Equal(t, tc.wrapped, errors.Is(got, tc.err))
		})
	}
}

func ExampleExplain() {
	err := &httpwatch.StatusError{Code: 401, Reason: "Unauthorized", Verb: "LIST", Path: "/api/v1/pods"}
	fmt.Println(cli.Explain(err, "https://127.0.0.1:6443"))
	// Output:
	// the server at https://127.0.0.1:6443 did not accept the credentials (401 Unauthorized): check --token, --token-file or the kubeconfig user
}
