package apiserve_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
)

// versions is a minimal Store: each key's versions, oldest first, a nil
// body marking a deletion.
type versions struct {
	rv, floor int64
	objs      map[string][]version
}

type version struct {
	rv   int64
	body []byte
}

func (v *versions) WaitFor(_ context.Context, rv int64) (int64, bool) { return v.rv, v.rv >= rv }
func (v *versions) Read(f func(apiserve.View))                        { f(v) }
func (v *versions) ResourceVersion() int64                            { return v.rv }
func (v *versions) Floor() int64                                      { return v.floor }

func (v *versions) List(rv int64, start string, limit int) ([]apiserve.Item, bool, int64) {
	var keys []string
	for k := range v.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []apiserve.Item
	var more bool
	var remaining int64
	for _, k := range keys {
		if k < start {
			continue
		}
		var body []byte
		for _, ver := range v.objs[k] {
			if ver.rv <= rv {
				body = ver.body
			}
		}
		if body == nil {
			continue
		}
		if limit > 0 && len(out) == limit {
			more = true
			remaining++
			continue
		}
		out = append(out, apiserve.Item{Key: k, Body: body})
	}
	return out, more, remaining
}

func (v *versions) put(key, body string) {
	v.rv++
	v.objs[key] = append(v.objs[key], version{v.rv, []byte(body)})
}

func serveList(t *testing.T, st apiserve.Store, q apiserve.ListQuery, l apiserve.Layout) (int, gjson.Result) {
	t.Helper()
	rec := httptest.NewRecorder()
	apiserve.ServeList(context.Background(), rec, st, q, l, nil)
	return rec.Code, gjson.ParseBytes(rec.Body.Bytes())
}

// Decision 40: the core lists a Store as the real server lists: the
// latest, an exact version, pages of one snapshot however the store
// changes, 410 for a version or token older than its history and 504 for
// one it never reaches; items are written as the store holds them.
func TestServeListReadsTheStoreAsTheRealServer(t *testing.T) {
	st := &versions{objs: map[string][]version{}}
	st.put("ns/a", `{"metadata":{"name":"a","resourceVersion":"1"}}`)
	st.put("ns/b", `{"metadata":{"name":"b","resourceVersion":"2"}}`)
	st.put("ns/c", `{"metadata":{"name":"c","resourceVersion":"3"}}`)
	cms := apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}

	code, l := serveList(t, st, apiserve.ListQuery{}, cms)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ConfigMapList", l.Get("kind").String())
	require.Equal(t, "3", l.Get("metadata.resourceVersion").String())
	require.Equal(t, `["a","b","c"]`, l.Get("items.#.metadata.name").Raw)
	require.False(t, l.Get("items.0.kind").Exists(), "built-in list items carry no kind")

	code, l = serveList(t, st, apiserve.ListQuery{ResourceVersion: "2", StartRV: 2, Match: "Exact"}, cms)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, `["a","b"]`, l.Get("items.#.metadata.name").Raw)

	code, l = serveList(t, st, apiserve.ListQuery{Limit: 1}, cms)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, int64(2), l.Get("metadata.remainingItemCount").Int())
	st.put("ns/aa", `{"metadata":{"name":"aa","resourceVersion":"4"}}`)
	code, l = serveList(t, st, apiserve.ListQuery{Continue: l.Get("metadata.continue").String(), Limit: 5}, cms)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, `["b","c"]`, l.Get("items.#.metadata.name").Raw, "the next page reads the first page's snapshot")
	require.Equal(t, "3", l.Get("metadata.resourceVersion").String())

	st.floor = 3
	code, l = serveList(t, st, apiserve.ListQuery{ResourceVersion: "2", StartRV: 2, Match: "Exact"}, cms)
	require.Equal(t, http.StatusGone, code)
	require.Equal(t, "Expired", l.Get("reason").String())
	code, _ = serveList(t, st, apiserve.ListQuery{ResourceVersion: "9", StartRV: 9, Match: "NotOlderThan"}, cms)
	require.Equal(t, http.StatusGatewayTimeout, code)

	widgets := apiserve.Layout{Kind: "Widget", APIVersion: "example.com/v1", Custom: true}
	_, l = serveList(t, st, apiserve.ListQuery{}, widgets)
	require.Equal(t, "Widget", l.Get("items.0.kind").String(), "custom list items are whole")
	require.True(t, strings.HasPrefix(l.Raw, `{"apiVersion":"example.com/v1","items":[`))
}

// Decision 40: a watch sees an object that starts matching its selectors
// as ADDED and one that stops as DELETED with its state before.
func TestSelectedTurnsChangesIntoWhatAWatchSees(t *testing.T) {
	for _, tc := range []struct {
		typ          string
		before, now  bool
		seen         string
		old, visible bool
	}{
		{apiserve.Added, false, true, apiserve.Added, false, true},
		{apiserve.Added, false, false, "", false, false},
		{apiserve.Modified, true, true, apiserve.Modified, false, true},
		{apiserve.Modified, false, true, apiserve.Added, false, true},
		{apiserve.Modified, true, false, apiserve.Deleted, true, true},
		{apiserve.Modified, false, false, "", false, false},
		{apiserve.Deleted, false, true, apiserve.Deleted, false, true},
	} {
		seen, old, ok := apiserve.Selected(tc.typ, tc.before, tc.now)
		require.Equal(t, tc.visible, ok, "%+v", tc)
		if ok {
			require.Equal(t, tc.seen, seen, "%+v", tc)
			require.Equal(t, tc.old, old, "%+v", tc)
		}
	}
}

func TestEventsAreWrittenAsTheRealServerWritesThem(t *testing.T) {
	p := apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}.Prefix()
	require.Equal(t, `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}}`+"\n",
		string(apiserve.AppendEvent(nil, apiserve.Added, p, []byte(`{"metadata":{"name":"a"}}`), 1, nil)))
	require.Equal(t, `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"annotations":{"k8s.io/initial-events-end":"true"},"resourceVersion":"7"}}}`+"\n",
		string(apiserve.AppendBookmark(nil, p, 7, true)))
	require.Equal(t, `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided watch is too old.","reason":"Expired","code":410}}`+"\n",
		string(apiserve.AppendError(nil, apiserve.Expired("watch"))))
}
