package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
)

// rawRead is one request sent to kube-apiserver and to the served cache.
type rawRead struct {
	name, path string
	// events is how many watch events to read; 0 for a list or get.
	events int
	// reached marks a list or watch whose answer carries "the version
	// reached" (resourceVersion "", "0" or NotOlderThan): the served cache
	// answers the version it has reached, kube-apiserver its store's
	// newest, moved by writes in other namespaces too (decision 43,
	// LIST). Only then is that one version masked.
	reached bool
}

// answer is one server's answer to a rawRead, decoded: a list or get's
// body, or the watch events read.
type answer struct {
	code  int
	body  any
	token string // a list's continue token, unmasked
}

func (a answer) String() string {
	b, _ := json.MarshalIndent(a.body, "", " ")
	return fmt.Sprintf("%d %s", a.code, b)
}

// read sends r to base through hc; a list's continue token is followed,
// its pages appended, as kubectl's --chunk-size does.
func read(t *testing.T, hc *http.Client, base string, r rawRead) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+r.path, nil)
	require.NoError(t, err)
	resp, err := hc.Do(req)
	require.NoError(t, err, r.name)
	defer resp.Body.Close()
	a := answer{code: resp.StatusCode}
	dec := json.NewDecoder(resp.Body)
	if r.events == 0 || resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err, r.name)
		require.NoError(t, json.Unmarshal(b, &a.body), "%s: %s", r.name, b)
		if m, ok := a.body.(map[string]any); ok {
			if meta, ok := m["metadata"].(map[string]any); ok {
				a.token, _ = meta["continue"].(string)
			}
		}
		a.body = maskRead(a.body, r.reached)
		return a
	}
	var evs []any
	for range r.events {
		var ev map[string]any
		require.NoError(t, dec.Decode(&ev), "%s: event %d of %d", r.name, len(evs)+1, r.events)
		evs = append(evs, maskRead(ev, r.reached))
	}
	a.body = evs
	return a
}

// maskRead masks what two answers of the same objects may differ in: a
// continue token (opaque to clients; the pages it leads to are compared)
// and, when reached, the version reached (see rawRead).
func maskRead(v any, reached bool) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta != nil {
		if c, _ := meta["continue"].(string); c != "" {
			meta["continue"] = "TOKEN"
		}
		if _, isList := m["items"]; isList && reached {
			meta["resourceVersion"] = "REACHED"
		}
	}
	if obj, ok := m["object"].(map[string]any); ok && m["type"] == "BOOKMARK" && reached {
		if om, _ := obj["metadata"].(map[string]any); om != nil {
			om["resourceVersion"] = "REACHED"
		}
	}
	return m
}

func listQuery(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}

// servedReads are the requests compared; {X} is the version of the
// update of c1, after which c4 was deleted and c7 created.
func servedReads(ns, x string) []rawRead {
	cms := "/api/v1/namespaces/" + ns + "/configmaps"
	ps := "/api/v1/namespaces/" + ns + "/pods"
	r := func(name, path string, reached bool) rawRead {
		return rawRead{name: name, path: path, reached: reached}
	}
	w := func(name, path string, events int, reached bool) rawRead {
		return rawRead{name: name, path: path, events: events, reached: reached}
	}
	return []rawRead{
		r("get configmap", cms+"/c1", false),
		r("get pod", ps+"/p1", false),
		r("get missing", cms+"/missing", false),
		r("list", cms, true),
		r("list pods", ps, true),
		r("list rv=0", cms+listQuery("resourceVersion", "0"), true),
		r("list labelSelector", cms+listQuery("labelSelector", "tier=gold"), true),
		r("list labelSelector set-based", cms+listQuery("labelSelector", "tier in (gold,bronze),!app"), true),
		r("list fieldSelector", cms+listQuery("fieldSelector", "metadata.name!=c2"), true),
		r("list pods fieldSelector node", ps+listQuery("fieldSelector", "spec.nodeName=n1"), true),
		r("list pods fieldSelector phase and label", ps+listQuery("fieldSelector", "status.phase=Pending", "labelSelector", "app=a"), true),
		r("list limit=2", cms+listQuery("limit", "2"), false),
		r("list limit=2 labelSelector", cms+listQuery("limit", "2", "labelSelector", "app"), false),
		r("list Exact at X", cms+listQuery("resourceVersion", x, "resourceVersionMatch", "Exact"), false),
		r("list limit=2 at X", cms+listQuery("resourceVersion", x, "resourceVersionMatch", "Exact", "limit", "2"), false),
		r("list NotOlderThan X", cms+listQuery("resourceVersion", x, "resourceVersionMatch", "NotOlderThan"), true),
		w("watch from X", cms+listQuery("watch", "1", "resourceVersion", x), 2, false),
		w("watch from X, labelSelector", cms+listQuery("watch", "1", "resourceVersion", x, "labelSelector", "tier"), 1, false),
		w("watch rv=0", cms+listQuery("watch", "1", "resourceVersion", "0"), 6, false),
		w("watch sendInitialEvents", cms+listQuery("watch", "1", "sendInitialEvents", "true", "allowWatchBookmarks", "true",
			"resourceVersionMatch", "NotOlderThan", "labelSelector", "tier"), 4, true),
		w("watch pods rv=0 fieldSelector", ps+listQuery("watch", "1", "resourceVersion", "0", "fieldSelector", "spec.nodeName=n2"), 1, false),
	}
}

// Decision 43: the same requests — gets, lists with selectors, pages,
// exact and not-older-than versions, watches from a version, from 0 and
// as a stream of initial events — answered by the served cache and by
// kube-apiserver are the same JSON, the objects byte for byte as decoded;
// masked only: continue tokens (opaque; every page is compared) and the
// version reached where decision 43 says the cache answers its own.
func TestServedCacheReadsMatchRealServer(t *testing.T) {
	cfg := config(t)
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	realHC := &http.Client{Transport: rt, Timeout: 30 * time.Second}
	defer realHC.CloseIdleConnections()
	c := client(t)
	ns := namespace(t, c)
	fillServed(t, c, ns)
	sc := serveNamespace(t, c, ns)
	ctx := ctxTimeout(t, wait)
	cms := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	o, err := cms.Patch(ctx, "c1", httpwatch.MergePatch, []byte(`{"data":{"k":"changed"}}`))
	require.NoError(t, err)
	x := o.ResourceVersion()
	require.NoError(t, cms.Delete(ctx, "c4"))
	_, err = cms.Create(ctx, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c7","labels":{"tier":"gold"}}}`))
	require.NoError(t, err)
	sc.caughtUp(t, c, ns)

	same := 0
	reads := servedReads(ns, x)
	for _, r := range reads {
		want, got := readAll(t, realHC, cfg.Host, r), readAll(t, sc.hc, sc.url, r)
		if fmt.Sprint(want) == fmt.Sprint(got) {
			same++
			continue
		}
		t.Errorf("%s: GET %s\n%s", r.name, r.path, firstDiff(fmt.Sprint(want), fmt.Sprint(got)))
	}
	t.Logf("%d of %d reads identical on the served cache", same, len(reads))
}

// readAll reads r, and the pages its continue tokens lead to.
func readAll(t *testing.T, hc *http.Client, base string, r rawRead) []answer {
	t.Helper()
	var out []answer
	for page := 0; ; page++ {
		require.Less(t, page, 20, "%s: more pages than objects", r.name)
		a := read(t, hc, base, r)
		out = append(out, a)
		if r.events > 0 || a.token == "" {
			return out
		}
		token := a.token
		r.path = setQuery(r.path, "continue", token)
		r.path = delQuery(r.path, "resourceVersion", "resourceVersionMatch")
	}
}

func setQuery(path, k, v string) string {
	p, q, _ := strings.Cut(path, "?")
	vals, _ := url.ParseQuery(q)
	vals.Set(k, v)
	return p + "?" + vals.Encode()
}

func delQuery(path string, keys ...string) string {
	p, q, _ := strings.Cut(path, "?")
	vals, _ := url.ParseQuery(q)
	for _, k := range keys {
		vals.Del(k)
	}
	return p + "?" + vals.Encode()
}

// firstDiff shows where two answers first differ, with a few lines
// around.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(0, i-6)
	cut := func(l []string) string { return strings.Join(l[min(from, len(l)):min(i+6, len(l))], "\n") }
	return fmt.Sprintf("at line %d of %d (kube-apiserver) and %d (served cache)\n--- kube-apiserver:\n%s\n--- served cache:\n%s", i+1, len(w), len(g), cut(w), cut(g))
}
