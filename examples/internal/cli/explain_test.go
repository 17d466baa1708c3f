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
		err  error
		want string
	}{
		"401":                {status(401, "Unauthorized"), "the server at https://k:6443 did not accept the credentials (401 Unauthorized): check --token-file or the kubeconfig user"},
		"403":                {status(403, "Forbidden"), "not allowed (403 Forbidden): the user or service account needs get, list and watch on the resource"},
		"404":                {status(404, ""), "the server has no such resource (404 NotFound); check its name, version and group"},
		"connection refused": {fmt.Errorf("dial: %w", syscall.ECONNREFUSED), "cannot reach the server at https://k:6443"},
		"timed out":          {fmt.Errorf("interrupted before the first sync: %w", context.DeadlineExceeded), "cannot reach the server at https://k:6443"},
		"anything else":      {other, "something else"},
	} {
		t.Run(name, func(t *testing.T) {
			got := cli.Explain(tc.err, "https://k:6443")
			assert.Equal(t, tc.want, got.Error(), "one line")
			assert.ErrorIs(t, got, tc.err, "the cause stays wrapped")
		})
	}
}

func ExampleExplain() {
	err := &httpwatch.StatusError{Code: 401, Reason: "Unauthorized", Verb: "LIST", Path: "/api/v1/pods"}
	fmt.Println(cli.Explain(err, "https://127.0.0.1:6443"))
	// Output:
	// the server at https://127.0.0.1:6443 did not accept the credentials (401 Unauthorized): check --token-file or the kubeconfig user
}
