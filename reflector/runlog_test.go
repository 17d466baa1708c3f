package reflector

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// resourceScript is a scriptSource that says which resource it reads, as
// a *httpwatch.ResourceClient does.
type resourceScript struct {
	*scriptSource
	res httpwatch.Resource
}

func (s resourceScript) Info() httpwatch.SourceInfo {
	info := s.scriptSource.Info()
	info.Resource = s.res
	return info
}

// decision 20: a failure that carries no request of its own (a refused
// connection) is logged with the verb and path of the collection the
// source reads, when the source can say which.
func TestFailureLineNamesTheSourcesPath(t *testing.T) {
	src := resourceScript{&scriptSource{pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){fail(errConnRefused)}},
		httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "ns"}}
	r := New(src, &recordSink{})
	r.Name, r.PagedList, r.Backoff = "pods", true, Backoff{Initial: time.Hour}
	log := &testlog.Log{}
	r.Logger = slog.New(log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()
	require.Eventually(t, func() bool { return len(log.Above()) == 1 }, 10*time.Second, time.Millisecond)
	line := log.Above()[0]
	assert.True(t, strings.HasPrefix(line, "WARN reflector: list failed resource=pods op=list verb=GET path=/api/v1/namespaces/ns/pods "), line)
}

// decision 20: after a logged failure, the first event of the watch that
// follows is the recovery, said once at Info; here the watch start was
// refused (retried without a list) and the next watch carries one event.
func TestRecoveryAtTheFirstEvent(t *testing.T) {
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "10"))},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchFail(errConnRefused), watchOf(newWatcher(ev(httpwatch.Added, obj("b", "11"))))},
	}
	sink := &recordSink{}
	r := New(src, sink)
	r.Name, r.PagedList, r.Backoff = "pods", true, Backoff{Initial: -1}
	log := &testlog.Log{}
	r.Logger = slog.New(log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()
	require.Eventually(t, func() bool { return len(sink.log()) == 2 }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return len(log.Above()) == 2 }, 10*time.Second, time.Millisecond, "%q", log.Above())
	lines := log.Above()
	assert.True(t, strings.HasPrefix(lines[0], "WARN reflector: watch start failed"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "INFO reflector: recovered after 1 failure resource=pods"), lines[1])
}

// decision 38: the hint of a 403 names the request the program must be
// granted: the verb of the operation that failed (a watch-list is a
// list), and the resource and namespace of the request refused, or else
// of the collection the source reads.
func TestHintNamesTheRequestRefused(t *testing.T) {
	src := resourceScript{&scriptSource{}, httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "ns1"}}
	r := New(src, &recordSink{})
	r.Name = "pods"
	forbidden := &httpwatch.StatusError{Code: 403, Reason: "Forbidden"}
	elsewhere := &httpwatch.StatusError{Code: 403, Reason: "Forbidden", Verb: "GET", Path: "/api/v1/namespaces/other/configmaps"}
	for _, c := range []struct {
		op   Op
		err  error
		want string
	}{
		{OpList, forbidden, "grant list on pods in namespace ns1"},
		{OpWatchList, forbidden, "grant list on pods in namespace ns1"},
		{OpWatch, forbidden, "grant watch on pods in namespace ns1"},
		{OpList, elsewhere, "grant list on configmaps in namespace other"},
	} {
		assert.Contains(t, r.hint(&SyncError{Op: c.op, Err: c.err}), c.want, "%s: %v", c.op, c.err)
	}
	r.Source = &scriptSource{} // says nothing of its resource
	assert.Contains(t, r.hint(&SyncError{Op: OpList, Err: forbidden}), "grant list on pods at cluster scope")
}
