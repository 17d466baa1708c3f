package cause_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/kubeconfig"
)

type timeoutError string

func (e timeoutError) Error() string { return string(e) }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func status(code int, reason string) *httpwatch.StatusError {
	return &httpwatch.StatusError{Code: code, Reason: reason, Verb: "GET", Path: "/api/v1/namespaces/ns/pods"}
}

// samples is an error of every row, as the code that meets it sees it:
// wrapped in what was being done.
var samples = map[string]error{
	"canceled":              fmt.Errorf("list: %w", context.Canceled),
	"conflict":              status(409, "Conflict"),
	"gone":                  status(410, "Expired"),
	"no initial-events-end": cause.New("no initial-events-end", "watch-list ended early"),
	"panic":                 cause.New("panic", "reconcile: panic"),
	"exec plugin missing":   fmt.Errorf("GET /api/v1/pods: %w: exec: not found", kubeconfig.ErrExecPluginMissing),
	"foreign lease":         cause.New("foreign lease", "lease belongs to another user"),
	"held lease":            cause.New("held lease", "lease is held"),
	"certificate":           fmt.Errorf("GET: %w", x509.UnknownAuthorityError{}),
	"unknown resource":      fmt.Errorf("resource %q: %w", "pod", discovery.ErrUnknownResource),
	"namespace required":    fmt.Errorf("list: %w", httpwatch.ErrNamespaceRequired),
	"401":                   status(401, "Unauthorized"),
	"403":                   status(403, "Forbidden"),
	"namespace missing":     &httpwatch.StatusError{Code: 404, Reason: "NotFound", Details: httpwatch.StatusDetails{Kind: "namespaces", Name: "ns"}},
	"object missing":        &httpwatch.StatusError{Code: 404, Reason: "NotFound", Details: httpwatch.StatusDetails{Kind: "pods", Name: "a"}},
	"404":                   status(404, "NotFound"),
	"400":                   status(400, "BadRequest"),
	"refused request":       status(405, "MethodNotAllowed"),
	"429":                   status(429, "TooManyRequests"),
	"status":                status(503, "ServiceUnavailable"),
	"connection refused":    &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
	"name not resolved":     &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}},
	"no response headers":   fmt.Errorf("WATCH: %w within 1m0s", httpwatch.ErrResponseHeaderTimeout),
	"TLS handshake timeout": fmt.Errorf("WATCH: %w", timeoutError("net/http: TLS handshake timeout")),
	"silent watch":          fmt.Errorf("WATCH: %w: no byte for 2m30s", httpwatch.ErrWatchIdle),
	"no bookmarks":          fmt.Errorf("WATCH: %w within 2m30s of the watch's start", httpwatch.ErrNoBookmarks),
	"connection lost":       fmt.Errorf("WATCH: %w", httpwatch.ErrConnectionLost),
	"timeout":               &net.OpError{Op: "dial", Net: "tcp", Err: timeoutError("i/o timeout")},
	"connection cut":        &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)},
	"unreachable":           &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ENETUNREACH)},
	"very short watch":      cause.New("very short watch", "watch closed within a second"),
	"unexpected kind":       cause.New("unexpected kind", "object of an unexpected kind"),
	"permission denied":     &fs.PathError{Op: "open", Path: "/snap/pods", Err: fs.ErrPermission},
	"no space":              &fs.PathError{Op: "write", Path: "/snap/pods", Err: syscall.ENOSPC},
}

// decision 38: every row is reached by an error of its cause, wrapped as the code
// meeting it wraps it, and Of finds that row: no row is shadowed by one
// above it. A row added without a sample fails here.
func TestEveryRowIsReached(t *testing.T) {
	keys := map[string]bool{}
	for _, row := range cause.Table {
		require.False(t, keys[row.Key], "two rows of key %q", row.Key)
		keys[row.Key] = true
		err, ok := samples[row.Key]
		require.True(t, ok, "row %q has no sample error in this test", row.Key)
		got := cause.Of(err)
		want := row.Key
		if want == "status" || want == "refused request" {
			var se *httpwatch.StatusError
			require.ErrorAs(t, err, &se)
			want = fmt.Sprint(se.Code) // a status without a row of its own is keyed by its code
		}
		assert.Equal(t, want, got.Key, "the row of %v", err)
		assert.Equal(t, row.Class, got.Class, "class of %q", row.Key)
	}
	assert.Len(t, samples, len(cause.Table), "a sample without its row")
}

// decision 38: the table's Permanent is httpwatch.IsPermanent for every error the
// client returns (what its retries and the waits go by), but a 404 on one
// object, which a reconcile may well see cured.
func TestPermanentAgreesWithTheClient(t *testing.T) {
	for key, err := range samples {
		if key == "object missing" || key == "panic" || key == "foreign lease" || key == "permission denied" {
			continue // not the client's errors, or the documented exception
		}
		assert.Equal(t, httpwatch.IsPermanent(err), cause.Of(err).Class == cause.Permanent, "%s: %v", key, err)
	}
}

// Only the network resumes a watch; of what the server says, only 429
// (conformance 22, decision 38).
func TestOnlyTheNetworkAnd429Resume(t *testing.T) {
	network := map[string]bool{"429": true, "connection refused": true, "name not resolved": true,
		"no response headers": true, "TLS handshake timeout": true, "silent watch": true, "no bookmarks": true, "connection lost": true,
		"timeout": true, "connection cut": true, "unreachable": true}
	for _, row := range cause.Table {
		assert.Equal(t, network[row.Key], row.Then == cause.Resume, "row %q", row.Key)
		// One outage is one failure in the log, whatever it shows first,
		// a silent watch too; a server without bookmarks is routine.
		outage := network[row.Key] && row.Key != "429" && row.Key != "no bookmarks"
		assert.Equal(t, outage, row.LogKey() == "network", "row %q", row.Key)
	}
}

// Only a cut is routine when it ends an open watch: a watch is cut now
// and then. A connection found silent (the HTTP/2 ping, or the watch's own
// bound) is an outage's first sign, said at Warn (decision 38).
func TestOnlyCutsAreQuiet(t *testing.T) {
	quiet := map[string]bool{"TLS handshake timeout": true, "timeout": true, "connection cut": true}
	for _, row := range cause.Table {
		assert.Equal(t, quiet[row.Key], row.Quiet, "row %q", row.Key)
	}
}

func TestUnknownErrorIsTransientAndKeyedByType(t *testing.T) {
	c := cause.Of(fmt.Errorf("decode: %w", errors.New("frame exceeds 64 MiB")))
	assert.Equal(t, cause.Transient, c.Class)
	assert.Equal(t, cause.Relist, c.Then)
	assert.Equal(t, "*errors.errorString", c.Key)
	assert.Equal(t, cause.Cut, cause.Of(fmt.Errorf("read: %w", io.ErrUnexpectedEOF)).Ends)
}

func TestHints(t *testing.T) {
	for _, tc := range []struct {
		key  string
		rq   cause.Request
		want string
	}{
		{"403", cause.Request{Verb: "patch", Resource: "configmaps", Namespace: "ns"},
			"check RBAC: grant patch on configmaps in namespace ns to this program's user or service account (a Role and a RoleBinding)"},
		{"403", cause.Request{Verb: "list", Resource: "pods"},
			"check RBAC: grant list on pods at cluster scope to this program's user or service account (a ClusterRole and a ClusterRoleBinding)"},
		{"400", cause.Request{Resource: "pods", FieldSelector: "spec.nodeNam=a"},
			`check the field selector "spec.nodeNam=a": the server may not support that field for pods`},
		{"exec plugin missing", cause.Request{},
			"install the exec credential plugin, or fix its path (users[].user.exec.command in the kubeconfig)"},
		{"namespace missing", cause.Request{Namespace: "ns"}, "create namespace ns, or use a namespace that exists"},
		{"429", cause.Request{}, ""},
		// What each hint names comes from the request; a hint with nothing
		// to name says what it can without it.
		{"unknown resource", cause.Request{Resource: "widgets.example.com"},
			"check the resource name, version and group: the server does not serve widgets.example.com"},
		{"unknown resource", cause.Request{},
			"check the resource name, version and group: the server does not serve it"},
		{"foreign lease", cause.Request{Namespace: "kube-system"},
			"another user of namespace kube-system made a lease of this name: choose another name"},
		{"foreign lease", cause.Request{},
			"another user of its namespace made a lease of this name: choose another name"},
		{"namespace missing", cause.Request{}, "create its namespace, or use a namespace that exists"},
		{"404", cause.Request{Resource: "widgets.example.com"},
			"check the resource name, version, group and namespace: the server does not serve widgets.example.com there"},
		{"400", cause.Request{Resource: "pods", FieldSelector: "spec.nodeNam=a", LabelSelector: "app=web"},
			`check the field selector "spec.nodeNam=a" and the label selector "app=web"`},
		{"400", cause.Request{Resource: "pods", LabelSelector: "app in (web"},
			`check the label selector "app in (web"`},
		{"400", cause.Request{Resource: "pods"},
			"the server refuses what was sent: see message, and fix the object or the request"},
		{"permission denied", cause.Request{Resource: "/var/lib/app/pods.snap"},
			"check the permissions of /var/lib/app/pods.snap: this process may not write there"},
		{"no space", cause.Request{Resource: "/var/lib/app/pods.snap"},
			"free space on the device of /var/lib/app/pods.snap"},
		{"panic", cause.Request{},
			"fix the reconcile function: it panicked (recovered; the key is retried after a backoff)"},
	} {
		row, ok := cause.Lookup(tc.key)
		require.True(t, ok, tc.key)
		assert.Equal(t, tc.want, row.HintFor(tc.rq), tc.key)
	}
	for _, row := range cause.Table {
		if row.Class == cause.Permanent {
			assert.NotNil(t, row.Hint, "a permanent cause %q says what to do", row.Key)
		}
	}
}

func TestNewNeedsARow(t *testing.T) {
	assert.Panics(t, func() { _ = cause.New("no such cause", "x") })
}

// A cause is one row: its key, class, hint, bucket and what a watch does.
// Here the 401 everything shares, and a watch start the network failed.
func ExampleOf() {
	for _, err := range []error{
		&httpwatch.StatusError{Code: 401, Reason: "Unauthorized"},
		fmt.Errorf("WATCH /api/v1/pods: %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}),
	} {
		c := cause.Of(err)
		fmt.Printf("%s: %s, resume=%v, hint=%q\n", c.Key, c.Class, c.Then == cause.Resume, c.HintFor(cause.Request{}))
	}
	// Output:
	// 401: permanent, resume=false, hint="check the credentials: the server does not accept them (expired or wrong token, certificate?)"
	// connection refused: transient, resume=true, hint="check the server address: nothing listens there (or the server is restarting)"
}
