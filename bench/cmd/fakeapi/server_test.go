package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTestServer(t *testing.T, pods, burst int) (*server, *httptest.Server) {
	t.Helper()
	rendered, err := renderPods(pods, 3)
	require.NoError(t, err)
	s := newServer(rendered, burst, true)
	ts := httptest.NewServer(s.routes())
	t.Cleanup(ts.Close)
	return s, ts
}

type podList struct {
	Metadata struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int   `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []corev1.Pod `json:"items"`
}

func getList(t *testing.T, url string) (int, podList) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var l podList
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&l))
	}
	return resp.StatusCode, l
}

func TestPodsLookReal(t *testing.T) {
	pods, err := renderPods(200, 7)
	require.NoError(t, err)
	total := 0
	for i := range pods {
		b := append(append(append([]byte{}, pods[i].head...), podRV(i)...), pods[i].tail...)
		var p corev1.Pod
		require.NoError(t, json.Unmarshal(b, &p), "pod %d decodes as a corev1.Pod", i)
		require.Len(t, p.ManagedFields, 2)
		require.Len(t, p.OwnerReferences, 1)
		require.NotEmpty(t, p.Spec.Containers[0].Env)
		require.NotNil(t, p.Spec.Containers[0].LivenessProbe)
		require.Len(t, p.Status.Conditions, 5)
		require.Equal(t, podRV(i), p.ResourceVersion)
		total += len(b)
	}
	mean := total / len(pods)
	require.True(t, mean >= 3500 && mean <= 4000, "mean pod size %d bytes", mean)
}

func TestListPages(t *testing.T) {
	_, ts := newTestServer(t, 20, 0)
	seen := map[string]bool{}
	url := ts.URL + "/api/v1/pods?limit=7&resourceVersion=0"
	pages := 0
	for {
		code, l := getList(t, url)
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, "120", l.Metadata.ResourceVersion)
		pages++
		for _, p := range l.Items {
			require.False(t, seen[p.Name], "pod %s listed twice", p.Name)
			seen[p.Name] = true
		}
		if l.Metadata.Continue == "" {
			require.Nil(t, l.Metadata.RemainingItemCount)
			break
		}
		require.Equal(t, 20-len(seen), *l.Metadata.RemainingItemCount)
		url = ts.URL + "/api/v1/pods?limit=7&continue=" + l.Metadata.Continue
	}
	require.Equal(t, 3, pages)
	require.Len(t, seen, 20)

	code, l := getList(t, ts.URL+"/api/v1/namespaces/team-01/pods")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, l.Items, 7) // pods 1, 4, ..., 19
	for _, p := range l.Items {
		require.Equal(t, "team-01", p.Namespace)
	}
}

func TestListErrors(t *testing.T) {
	_, ts := newTestServer(t, 5, 0)
	for _, tc := range []struct {
		query string
		code  int
	}{
		{"continue=bm9wZQ", http.StatusBadRequest},
		{"limit=-1", http.StatusBadRequest},
		{"resourceVersion=abc", http.StatusBadRequest},
		{"resourceVersion=106", http.StatusGatewayTimeout},
		{"resourceVersion=105", http.StatusOK},
	} {
		code, _ := getList(t, ts.URL+"/api/v1/pods?"+tc.query)
		require.Equal(t, tc.code, code, tc.query)
	}
}

type event struct {
	Type   string     `json:"type"`
	Object corev1.Pod `json:"object"`
}

func readEvents(t *testing.T, sc *bufio.Scanner, n int) []event {
	t.Helper()
	var evs []event
	for range n {
		require.True(t, sc.Scan(), "stream ended early: %v", sc.Err())
		var e event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		evs = append(evs, e)
	}
	return evs
}

func openWatch(t *testing.T, url string) *bufio.Scanner {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return sc
}

func trigger(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Post(url+"/bench/burst", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
}

func TestWatchBurstAfterTrigger(t *testing.T) {
	_, ts := newTestServer(t, 4, 6)
	sc := openWatch(t, ts.URL+"/api/v1/pods?watch=1&resourceVersion=104&allowWatchBookmarks=true")
	trigger(t, ts.URL)
	evs := readEvents(t, sc, 7)
	for k, e := range evs[:6] {
		require.Equal(t, "MODIFIED", e.Type)
		require.Equal(t, strconv.Itoa(105+k), e.Object.ResourceVersion)
		require.Equal(t, "Pod", e.Object.Kind)
	}
	require.Equal(t, "BOOKMARK", evs[6].Type)
	require.Equal(t, "110", evs[6].Object.ResourceVersion)

	// A watch resuming inside the burst gets only the rest of it.
	sc = openWatch(t, ts.URL+"/api/v1/pods?watch=1&resourceVersion=108")
	trigger(t, ts.URL)
	evs = readEvents(t, sc, 2)
	require.Equal(t, "109", evs[0].Object.ResourceVersion)
	require.Equal(t, "110", evs[1].Object.ResourceVersion)
}

func TestWatchInitialEvents(t *testing.T) {
	_, ts := newTestServer(t, 3, 0)
	sc := openWatch(t, ts.URL+"/api/v1/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan")
	evs := readEvents(t, sc, 4)
	for _, e := range evs[:3] {
		require.Equal(t, "ADDED", e.Type)
	}
	require.Equal(t, "BOOKMARK", evs[3].Type)
	require.Equal(t, "true", evs[3].Object.Annotations["k8s.io/initial-events-end"])
	require.Equal(t, "103", evs[3].Object.ResourceVersion)
}

func TestInfoCountsRequests(t *testing.T) {
	s, ts := newTestServer(t, 10, 0)
	getList(t, ts.URL+"/api/v1/pods?limit=5")
	resp, err := http.Get(ts.URL + "/bench/info")
	require.NoError(t, err)
	defer resp.Body.Close()
	var info Info
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	require.Equal(t, 10, info.Pods)
	require.EqualValues(t, 1, info.Requests.Lists)
	require.EqualValues(t, float64(s.bytes)/10, info.BytesPerObject)
}

// As kube-apiserver 1.37 (e2e.TestResumedWatchOnRealServer): a watch from
// a version the server forgot gets 200, a 410 ERROR event and its end; a
// quiet resumed watch gets no bookmark before it ends.
func TestWatchFromForgottenOrQuietVersion(t *testing.T) {
	_, ts := newTestServer(t, 4, 2)
	sc := openWatch(t, ts.URL+"/api/v1/pods?watch=1&resourceVersion=103&allowWatchBookmarks=true")
	var e struct {
		Type   string `json:"type"`
		Object struct {
			Reason string `json:"reason"`
			Code   int    `json:"code"`
		} `json:"object"`
	}
	require.True(t, sc.Scan())
	require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
	require.Equal(t, "ERROR", e.Type)
	require.Equal(t, 410, e.Object.Code)
	require.Equal(t, "Expired", e.Object.Reason)
	require.False(t, sc.Scan(), "the stream ends after the 410")

	// From the burst's last version nothing is sent: the stream ends at
	// timeoutSeconds with no frame.
	sc = openWatch(t, ts.URL+"/api/v1/pods?watch=1&resourceVersion=106&allowWatchBookmarks=true&timeoutSeconds=1")
	require.False(t, sc.Scan(), "no frame: %q", sc.Text())
	require.NoError(t, sc.Err())
}
