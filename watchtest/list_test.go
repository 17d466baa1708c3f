package watchtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

func listPath(ns string, q url.Values) string {
	return podsPath(ns, "") + "?" + q.Encode()
}

func list(t *testing.T, s *watchtest.Server, path string) gjson.Result {
	t.Helper()
	code, body := get(t, s, path)
	require.Equal(t, http.StatusOK, code, "%s", body)
	return gjson.ParseBytes(body)
}

func TestListShapeMatchesFixtures(t *testing.T) {
	s := newServer(t)
	for i := 1; i <= 3; i++ {
		mustCreate(t, s, watchtest.Pods, podJSON("fixtures", fmt.Sprintf("web-%d", i), nil))
	}
	code, full := get(t, s, "/api/v1/namespaces/fixtures/pods")
	require.Equal(t, http.StatusOK, code)
	real := fixture(t, "pod-list.json")
	assert.Equal(t, keysOf(t, real), keysOf(t, full), "top-level keys in the real order")
	assert.Equal(t, keysOf(t, []byte(gjson.GetBytes(real, "metadata").Raw)), keysOf(t, []byte(gjson.GetBytes(full, "metadata").Raw)))
	for _, it := range gjson.GetBytes(full, "items").Array() {
		assert.False(t, it.Get("kind").Exists(), "built-in list items have no kind")
		assert.False(t, it.Get("apiVersion").Exists())
	}

	code, page1 := get(t, s, "/api/v1/namespaces/fixtures/pods?limit=2")
	require.Equal(t, http.StatusOK, code)
	realPage := fixture(t, "pod-list-page1.json")
	assert.Equal(t, keysOf(t, []byte(gjson.GetBytes(realPage, "metadata").Raw)), keysOf(t, []byte(gjson.GetBytes(page1, "metadata").Raw)))
	assert.Equal(t, int64(1), gjson.GetBytes(page1, "metadata.remainingItemCount").Int())

	s.AddResource(widgets, widget)
	mustCreate(t, s, widgets, `{"metadata":{"name":"w1","namespace":"default"},"spec":{"size":10}}`)
	code, crd := get(t, s, "/apis/example.com/v1/widgets")
	require.Equal(t, http.StatusOK, code)
	realCRD := fixture(t, "crd-list.json")
	assert.Equal(t, keysOf(t, realCRD), keysOf(t, crd), "custom resource lists come sorted")
	assert.Equal(t, keysOf(t, []byte(gjson.GetBytes(realCRD, "metadata").Raw)), keysOf(t, []byte(gjson.GetBytes(crd, "metadata").Raw)))
	assert.Equal(t, "WidgetList", gjson.GetBytes(crd, "kind").String())
	item := gjson.GetBytes(crd, "items.0")
	assert.Equal(t, "Widget", item.Get("kind").String(), "custom resource items carry kind")
	assert.Equal(t, "example.com/v1", item.Get("apiVersion").String())

	code, nsList := get(t, s, "/api/v1/namespaces")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, keysOf(t, fixture(t, "namespace-list.json")), keysOf(t, nsList))
}

func TestListOrderAndScope(t *testing.T) {
	s := newServer(t)
	for _, k := range [][2]string{{"b", "x"}, {"a-b", "z"}, {"a", "y"}, {"a", "x"}} {
		mustCreate(t, s, watchtest.Pods, podJSON(k[0], k[1], nil))
	}
	all := list(t, s, "/api/v1/pods")
	var keys []string
	for _, it := range all.Get("items").Array() {
		keys = append(keys, it.Get("metadata.namespace").String()+"/"+it.Get("metadata.name").String())
	}
	// etcd's order of "namespace/name" keys: '-' sorts before '/'.
	assert.Equal(t, []string{"a-b/z", "a/x", "a/y", "b/x"}, keys)
	assert.Equal(t, []string{"x", "y"}, names(list(t, s, "/api/v1/namespaces/a/pods").Get("items").Array()))
	assert.Empty(t, list(t, s, "/api/v1/namespaces/none/pods").Get("items").Array())
	assert.Equal(t, "[]", list(t, s, "/api/v1/namespaces/none/pods").Get("items").Raw)
}

// Every page of a list comes from the first page's snapshot, whatever
// happens between the pages: what a paginated reflector list relies on
// (conformance 14).
func TestPaginationIsConsistentUnderWrites(t *testing.T) {
	s := newServer(t)
	for i := range 10 {
		mustCreate(t, s, watchtest.Pods, podJSON("ns", fmt.Sprintf("p%02d", i), nil))
	}
	page := list(t, s, listPath("ns", url.Values{"limit": {"3"}}))
	snapRV := page.Get("metadata.resourceVersion").String()
	assert.Equal(t, []string{"p00", "p01", "p02"}, names(page.Get("items").Array()))
	assert.Equal(t, int64(7), page.Get("metadata.remainingItemCount").Int())

	// Change what later pages would show.
	_, err := s.Delete(watchtest.Pods, "ns", "p05")
	require.NoError(t, err)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "p04a", nil))
	_, err = s.Update(watchtest.Pods, podJSON("ns", "p07", map[string]string{"changed": "yes"}))
	require.NoError(t, err)

	got := names(page.Get("items").Array())
	pages := 1
	for cont := page.Get("metadata.continue").String(); cont != ""; cont = page.Get("metadata.continue").String() {
		page = list(t, s, listPath("ns", url.Values{"limit": {"3"}, "continue": {cont}}))
		assert.Equal(t, snapRV, page.Get("metadata.resourceVersion").String(), "every page has the snapshot's resourceVersion")
		for _, it := range page.Get("items").Array() {
			assert.False(t, it.Get("metadata.labels.changed").Exists(), "no page shows a later version")
		}
		got = append(got, names(page.Get("items").Array())...)
		pages++
	}
	assert.Equal(t, []string{"p00", "p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p09"}, got)
	assert.Equal(t, 4, pages)
	assert.False(t, page.Get("metadata.remainingItemCount").Exists(), "the last page has no count")

	fresh := list(t, s, listPath("ns", nil))
	assert.Equal(t, []string{"p00", "p01", "p02", "p03", "p04", "p04a", "p06", "p07", "p08", "p09"}, names(fresh.Get("items").Array()))
}

// The list side of the relist policy: "0" and "" serve the latest state,
// a not-older-than read never expires, an exact read does, and a version
// the server never reaches is "too large" (conformance 7, 12, 15).
func TestListResourceVersionSemantics(t *testing.T) {
	s := newServer(t)
	s.TooLargeWait = 0
	first := mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", map[string]string{"v": "1"}))
	_, err := s.Update(watchtest.Pods, podJSON("ns", "a", map[string]string{"v": "2"}))
	require.NoError(t, err)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	cur, _ := strconv.ParseInt(s.ResourceVersion(), 10, 64)
	old := rvOf(first)

	tests := []struct {
		name    string
		q       url.Values
		wantRV  string
		wantV   string // label v of pod a
		wantLen int
	}{
		{"latest", url.Values{}, s.ResourceVersion(), "2", 2},
		{"any", url.Values{"resourceVersion": {"0"}}, s.ResourceVersion(), "2", 2},
		{"any not older than", url.Values{"resourceVersion": {"0"}, "resourceVersionMatch": {"NotOlderThan"}}, s.ResourceVersion(), "2", 2},
		{"exact", url.Values{"resourceVersion": {old}, "resourceVersionMatch": {"Exact"}}, old, "1", 1},
		{"legacy exact with limit", url.Values{"resourceVersion": {old}, "limit": {"10"}}, old, "1", 1},
		{"not older than", url.Values{"resourceVersion": {old}, "resourceVersionMatch": {"NotOlderThan"}}, s.ResourceVersion(), "2", 2},
		{"legacy not older than", url.Values{"resourceVersion": {old}}, s.ResourceVersion(), "2", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := list(t, s, listPath("ns", tt.q))
			assert.Equal(t, tt.wantRV, l.Get("metadata.resourceVersion").String())
			assert.Len(t, l.Get("items").Array(), tt.wantLen)
			assert.Equal(t, tt.wantV, l.Get("items.0.metadata.labels.v").String())
		})
	}

	t.Run("too large", func(t *testing.T) {
		future := strconv.FormatInt(cur+1000, 10)
		for _, match := range []string{"NotOlderThan", "Exact"} {
			code, body, h := do(t, s, http.MethodGet, listPath("ns", url.Values{"resourceVersion": {future}, "resourceVersionMatch": {match}}), "")
			assert.Equal(t, http.StatusGatewayTimeout, code)
			real := fixture(t, "list-rv-too-large.json")
			assert.Equal(t, keysOf(t, real), keysOf(t, body))
			assert.Equal(t, gjson.GetBytes(real, "details").Raw, gjson.GetBytes(body, "details").Raw)
			assert.Equal(t, fmt.Sprintf("Timeout: Too large resource version: %s, current: %d", future, cur), gjson.GetBytes(body, "message").String())
			assert.Equal(t, "1", h.Get("Retry-After"))
		}
	})

	t.Run("exact after compaction", func(t *testing.T) {
		require.NoError(t, s.Compact(s.ResourceVersion()))
		code, body := get(t, s, listPath("ns", url.Values{"resourceVersion": {old}, "resourceVersionMatch": {"Exact"}}))
		assert.Equal(t, http.StatusGone, code)
		assert.Equal(t, "Expired", gjson.GetBytes(body, "reason").String())
		// Not-older-than reads are unaffected.
		assert.Len(t, list(t, s, listPath("ns", url.Values{"resourceVersion": {old}})).Get("items").Array(), 2)
	})
}

func TestListOptionsValidation(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		q    url.Values
		code int
		msg  string
	}{
		{url.Values{"resourceVersionMatch": {"NotOlderThan"}}, 422, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{url.Values{"resourceVersion": {"0"}, "resourceVersionMatch": {"Exact"}}, 422, `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{url.Values{"resourceVersion": {"1"}, "resourceVersionMatch": {"foo"}}, 422, `resourceVersionMatch: Unsupported value: "foo": supported values: "Exact", "NotOlderThan", ""`},
		{url.Values{"sendInitialEvents": {"true"}}, 422, `sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
		{url.Values{"continue": {"x"}, "resourceVersion": {"1"}}, 400, "specifying resource version is not allowed when using continue"},
		{url.Values{"continue": {"not-a-token"}}, 400, "continue key is not valid"},
		{url.Values{"resourceVersion": {"abc"}}, 400, `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{url.Values{"limit": {"ten"}}, 400, `invalid limit "ten"`},
		{url.Values{"fieldSelector": {"metadata.name"}}, 400, "invalid selector: 'metadata.name'; can't understand 'metadata.name'"},
	}
	for _, tt := range tests {
		t.Run(tt.q.Encode(), func(t *testing.T) {
			code, body := get(t, s, listPath("ns", tt.q))
			assert.Equal(t, tt.code, code, "%s", body)
			assert.Contains(t, gjson.GetBytes(body, "message").String(), tt.msg)
			if code == 422 {
				assert.Equal(t, "Invalid", gjson.GetBytes(body, "reason").String())
				assert.Equal(t, "ListOptions", gjson.GetBytes(body, "details.kind").String())
				assert.NotEmpty(t, gjson.GetBytes(body, "details.causes.0.field").String())
			}
		})
	}
	// Several broken rules are reported together.
	_, body := get(t, s, listPath("ns", url.Values{"resourceVersionMatch": {"foo"}, "continue": {"x"}}))
	assert.Len(t, gjson.GetBytes(body, "details.causes").Array(), 3)
	assert.Contains(t, gjson.GetBytes(body, "message").String(), "is invalid: [")
}

// An expired continue token is a 410 with a fresh token, the case a pager
// answers with a full list (conformance 14).
func TestExpiredContinue(t *testing.T) {
	s := newServer(t)
	for i := range 5 {
		mustCreate(t, s, watchtest.Pods, podJSON("ns", fmt.Sprintf("p%d", i), nil))
	}
	page := list(t, s, listPath("ns", url.Values{"limit": {"2"}}))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "p9", nil))
	require.NoError(t, s.Compact(s.ResourceVersion()))

	code, body := get(t, s, listPath("ns", url.Values{"limit": {"2"}, "continue": {page.Get("metadata.continue").String()}}))
	require.Equal(t, http.StatusGone, code)
	real := fixture(t, "list-expired-continue.json")
	assert.Equal(t, keysOf(t, real), keysOf(t, body))
	assert.Equal(t, gjson.GetBytes(real, "message").String(), gjson.GetBytes(body, "message").String())
	assert.Equal(t, "Expired", gjson.GetBytes(body, "reason").String())

	// The token in the answer goes on from the same key at the latest
	// version: an inconsistent but complete remainder.
	fresh := gjson.GetBytes(body, "metadata.continue").String()
	require.NotEmpty(t, fresh)
	rest := list(t, s, listPath("ns", url.Values{"limit": {"10"}, "continue": {fresh}}))
	assert.Equal(t, []string{"p2", "p3", "p4", "p9"}, names(rest.Get("items").Array()))
	assert.Equal(t, s.ResourceVersion(), rest.Get("metadata.resourceVersion").String())
}

func TestListSelectors(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, `{"metadata":{"name":"a","namespace":"x","labels":{"app":"web","tier":"gold"}},"status":{"phase":"Running"}}`)
	mustCreate(t, s, watchtest.Pods, `{"metadata":{"name":"b","namespace":"x","labels":{"app":"web"}},"status":{"phase":"Pending"}}`)
	mustCreate(t, s, watchtest.Pods, `{"metadata":{"name":"c","namespace":"y","labels":{"app":"db","tier":"gold"}},"spec":{"nodeName":"n1"}}`)
	tests := []struct {
		q    url.Values
		want []string
	}{
		{url.Values{"labelSelector": {"app=web"}}, []string{"a", "b"}},
		{url.Values{"labelSelector": {"tier"}}, []string{"a", "c"}},
		{url.Values{"labelSelector": {"!tier"}}, []string{"b"}},
		{url.Values{"labelSelector": {"app in (db),tier=gold"}}, []string{"c"}},
		{url.Values{"labelSelector": {"app notin (web)"}}, []string{"c"}},
		{url.Values{"fieldSelector": {"metadata.name=b"}}, []string{"b"}},
		{url.Values{"fieldSelector": {"metadata.namespace=y"}}, []string{"c"}},
		{url.Values{"fieldSelector": {"metadata.namespace!=y"}}, []string{"a", "b"}},
		{url.Values{"fieldSelector": {"status.phase=Running"}}, []string{"a"}},
		{url.Values{"fieldSelector": {"spec.nodeName="}}, []string{"a", "b"}},
		{url.Values{"fieldSelector": {"metadata.namespace=x"}, "labelSelector": {"tier=gold"}}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.q.Encode(), func(t *testing.T) {
			assert.Equal(t, tt.want, names(list(t, s, listPath("", tt.q)).Get("items").Array()))
		})
	}

	// With selectors the server cannot count what remains.
	page := list(t, s, listPath("", url.Values{"labelSelector": {"app"}, "limit": {"1"}}))
	assert.NotEmpty(t, page.Get("metadata.continue").String())
	assert.False(t, page.Get("metadata.remainingItemCount").Exists())
}

// A not-older-than list for a version the server has not reached waits for
// it, and serves it as soon as a write gets there.
func TestListWaitsForResourceVersion(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	clk := clock.NewFake(time.Unix(0, 0))
	s.Clock = clk
	s.TooLargeWait = 3 * time.Second
	s.BookmarkInterval = 0 // the only timer is then the list's wait
	s.Start()
	defer s.Close()
	want, _ := strconv.Atoi(s.ResourceVersion())
	want++
	q := url.Values{"resourceVersion": {strconv.Itoa(want)}, "resourceVersionMatch": {"NotOlderThan"}}

	type result struct {
		code int
		body []byte
	}
	res := make(chan result, 1)
	go func() {
		code, body, _ := do(t, s, http.MethodGet, listPath("ns", q), "")
		res <- result{code, body}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, clk.WaitForWaiters(ctx, 1))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	r := testwait.Recv(t, res, "the waiting list to answer once the write comes")
	assert.Equal(t, http.StatusOK, r.code, "%s", r.body)
	assert.Equal(t, strconv.Itoa(want), gjson.GetBytes(r.body, "metadata.resourceVersion").String())

	// Without a write, the wait ends with 504 when TooLargeWait is up.
	q.Set("resourceVersion", strconv.Itoa(want+5))
	go func() {
		code, body, _ := do(t, s, http.MethodGet, listPath("ns", q), "")
		res <- result{code, body}
	}()
	require.NoError(t, clk.WaitForWaiters(ctx, 1))
	clk.Step(3 * time.Second)
	r = testwait.Recv(t, res, "the waiting list to answer 504 when TooLargeWait is up")
	assert.Equal(t, http.StatusGatewayTimeout, r.code)
	assert.Equal(t, "ResourceVersionTooLarge", gjson.GetBytes(r.body, "details.causes.0.reason").String())
}

// Pages read while another goroutine keeps writing still add up to exactly
// the snapshot of the first page (conformance 14).
func TestPaginationWhileWriting(t *testing.T) {
	s := newServer(t)
	for i := range 40 {
		mustCreate(t, s, watchtest.Pods, podJSON("ns", fmt.Sprintf("p%02d", i), nil))
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("p%02d", i%40)
			if _, err := s.Update(watchtest.Pods, podJSON("ns", name, map[string]string{"i": strconv.Itoa(i)})); err != nil {
				if _, err := s.Create(watchtest.Pods, podJSON("ns", name, nil)); err != nil {
					t.Error(err)
					return
				}
			}
			if i%5 == 0 {
				_, _ = s.Delete(watchtest.Pods, "ns", fmt.Sprintf("p%02d", (i*7)%40))
			}
		}
	}()

	var got []string
	page := list(t, s, listPath("ns", url.Values{"limit": {"7"}}))
	snap := page.Get("metadata.resourceVersion").String()
	for {
		for _, it := range page.Get("items").Array() {
			got = append(got, it.Get("metadata.name").String()+"@"+it.Get("metadata.resourceVersion").String())
		}
		cont := page.Get("metadata.continue").String()
		if cont == "" {
			break
		}
		page = list(t, s, listPath("ns", url.Values{"limit": {"7"}, "continue": {cont}}))
		require.Equal(t, snap, page.Get("metadata.resourceVersion").String())
	}
	close(stop)
	testwait.Recv(t, done, "the writer to stop")

	whole := list(t, s, listPath("ns", url.Values{"resourceVersion": {snap}, "resourceVersionMatch": {"Exact"}}))
	var want []string
	for _, it := range whole.Get("items").Array() {
		want = append(want, it.Get("metadata.name").String()+"@"+it.Get("metadata.resourceVersion").String())
	}
	assert.Equal(t, want, got)
}
