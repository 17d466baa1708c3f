package watchtest_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// sendH makes a request with headers and returns the status, body and
// headers of the answer, the body as sent (not decompressed).
func sendH(t *testing.T, s *watchtest.Server, method, path, body string, header map[string]string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b, resp.Header
}

// Decision 40: client-go's Accept, protobuf first, is answered in JSON;
// an Accept with nothing the server writes is the real 406.
func TestAnyClientAcceptListsGetJSON(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"c","namespace":"ns"},"data":{"a":"1"}}`)
	for _, path := range []string{"/api/v1/namespaces/ns/configmaps", "/api/v1/namespaces/ns/configmaps/c"} {
		code, body, h := sendH(t, s, http.MethodGet, path, "", map[string]string{"Accept": "application/vnd.kubernetes.protobuf,application/json"})
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, "application/json", h.Get("Content-Type"))
		require.True(t, json.Valid(body))

		code, body, _ = sendH(t, s, http.MethodGet, path, "", map[string]string{"Accept": "application/vnd.kubernetes.protobuf"})
		require.Equal(t, http.StatusNotAcceptable, code)
		require.Equal(t, "NotAcceptable", gjson.GetBytes(body, "reason").String())
		require.Equal(t, "only the following media types are accepted: application/json", gjson.GetBytes(body, "message").String())
	}
}

// Decision 40: a create or update whose body is protobuf or CBOR is the
// real server's 415 naming what the server reads, not a 400 about JSON.
func TestAnyClientUnreadableBodyIs415(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"c","namespace":"ns"}}`)
	for _, tc := range []struct{ method, path, ct string }{
		{http.MethodPost, "/api/v1/namespaces/ns/configmaps", "application/vnd.kubernetes.protobuf"},
		{http.MethodPost, "/api/v1/namespaces/ns/configmaps", "application/cbor"},
		{http.MethodPut, "/api/v1/namespaces/ns/configmaps/c", "application/vnd.kubernetes.protobuf"},
	} {
		code, body, _ := sendH(t, s, tc.method, tc.path, "k8s\x00\x0a\x0f", map[string]string{"Content-Type": tc.ct})
		require.Equal(t, http.StatusUnsupportedMediaType, code, tc)
		require.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
			"message":"the body of the request was in an unknown format - accepted media types include: application/json",
			"reason":"UnsupportedMediaType","code":415}`, string(body))
	}
	_, err := s.Get(watchtest.ConfigMaps, "ns", "c")
	require.NoError(t, err)
}

// Decision 40: a list larger than 128 KiB is gzipped for a client that
// accepts gzip, a smaller one is not; a watch never is.
func TestAnyClientGzipPastTheThreshold(t *testing.T) {
	s := newServer(t)
	big := strings.Repeat("x", 64<<10)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"ns"},"data":{"v":"`+big+`"}}`)
	gz := map[string]string{"Accept-Encoding": "gzip"}
	code, body, h := sendH(t, s, http.MethodGet, "/api/v1/namespaces/ns/configmaps", "", gz)
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, h.Get("Content-Encoding"))
	require.True(t, json.Valid(body))

	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"b","namespace":"ns"},"data":{"v":"`+big+`"}}`)
	code, body, h = sendH(t, s, http.MethodGet, "/api/v1/namespaces/ns/configmaps", "", gz)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "gzip", h.Get("Content-Encoding"))
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	plain, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, names(gjson.GetBytes(plain, "items").Array()))

	code, body, h = sendH(t, s, http.MethodGet, "/api/v1/namespaces/ns/configmaps?watch=1&timeoutSeconds=1", "", gz)
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, h.Get("Content-Encoding"))
	require.Equal(t, 2, bytes.Count(body, []byte("\n")))
}

// Decision 40: /version answers as kube-apiserver 1.37.2 does, or as the
// server's Version says.
func TestAnyClientVersion(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	s.Version.GitCommit = "0123"
	s.Start()
	defer s.Close()
	code, body := get(t, s, "/version")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "v1.37.2", gjson.GetBytes(body, "gitVersion").String())
	require.Equal(t, "0123", gjson.GetBytes(body, "gitCommit").String())
	require.Equal(t, "37", gjson.GetBytes(body, "minor").String())
}

// Decision 40: kubectl get's Accept gets a Table with the real server's
// columns, for a list (with its list metadata), one object and a watch
// (column definitions only in the first event); includeObject is honoured.
func TestAnyClientTable(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"ns"},"data":{"x":"1","y":"2"}}`)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"b","namespace":"ns"}}`)
	accept := map[string]string{"Accept": tableAccept}

	code, body, h := sendH(t, s, http.MethodGet, "/api/v1/namespaces/ns/configmaps?limit=1", "", accept)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "application/json", h.Get("Content-Type"))
	tb := gjson.ParseBytes(body)
	require.Equal(t, "Table", tb.Get("kind").String())
	require.Equal(t, "meta.k8s.io/v1", tb.Get("apiVersion").String())
	require.NotEmpty(t, tb.Get("metadata.continue").String())
	require.Equal(t, int64(1), tb.Get("metadata.remainingItemCount").Int())
	require.Equal(t, `["Name","Data","Age"]`, tb.Get("columnDefinitions.#.name").Raw)
	require.Equal(t, `["a",2,"0s"]`, tb.Get("rows.0.cells").Raw)
	require.Equal(t, "PartialObjectMetadata", tb.Get("rows.0.object.kind").String())
	require.Equal(t, "a", tb.Get("rows.0.object.metadata.name").String())

	code, body, _ = sendH(t, s, http.MethodGet, "/api/v1/namespaces/ns/configmaps/b?includeObject=Object", "", accept)
	require.Equal(t, http.StatusOK, code)
	tb = gjson.ParseBytes(body)
	require.Equal(t, `["b",0,"0s"]`, tb.Get("rows.0.cells").Raw)
	require.Equal(t, "ConfigMap", tb.Get("rows.0.object.kind").String())
	require.Equal(t, tb.Get("rows.0.object.metadata.resourceVersion").String(), tb.Get("metadata.resourceVersion").String())

	code, body, _ = sendH(t, s, http.MethodGet, "/api/v1/namespaces/ns/configmaps?includeObject=all", "", accept)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, `unrecognized includeObject value: "all"`, gjson.GetBytes(body, "message").String())

	code, body, _ = sendH(t, s, http.MethodGet, "/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=0&timeoutSeconds=1", "", accept)
	require.Equal(t, http.StatusOK, code)
	var events []gjson.Result
	for line := range bytes.SplitSeq(bytes.TrimSpace(body), []byte("\n")) {
		events = append(events, gjson.ParseBytes(line))
	}
	require.Len(t, events, 2)
	require.Equal(t, "ADDED", events[0].Get("type").String())
	require.Equal(t, "Table", events[0].Get("object.kind").String())
	require.Equal(t, 3, len(events[0].Get("object.columnDefinitions").Array()))
	require.Equal(t, "null", events[1].Get("object.columnDefinitions").Raw)
	require.Equal(t, "b", events[1].Get("object.rows.0.cells.0").String())
}

// Decision 40: a custom resource's Table has its additionalPrinterColumns;
// without any, Name and Age.
func TestAnyClientCustomResourceTable(t *testing.T) {
	s := newServer(t)
	widgets := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "widgets"}
	gadgets := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	s.AddResource(widgets, watchtest.Definition{Kind: "Widget", Namespaced: true,
		PrinterColumns: []apiserve.PrinterColumn{{Name: "Color", Type: "string", JSONPath: ".spec.color"}, {Name: "Size", Type: "integer", JSONPath: ".spec.size"}}})
	s.AddResource(gadgets, watchtest.Definition{Kind: "Gadget"})
	mustCreate(t, s, widgets, `{"metadata":{"name":"w","namespace":"ns"},"spec":{"color":"red","size":3}}`)
	mustCreate(t, s, gadgets, `{"metadata":{"name":"g"}}`)
	accept := map[string]string{"Accept": tableAccept}

	_, body, _ := sendH(t, s, http.MethodGet, "/apis/example.com/v1/widgets", "", accept)
	require.Equal(t, `["Name","Color","Size"]`, gjson.GetBytes(body, "columnDefinitions.#.name").Raw)
	require.Equal(t, `["w","red",3]`, gjson.GetBytes(body, "rows.0.cells").Raw)
	_, body, _ = sendH(t, s, http.MethodGet, "/apis/example.com/v1/gadgets", "", accept)
	require.Equal(t, `["Name","Age"]`, gjson.GetBytes(body, "columnDefinitions.#.name").Raw)
	require.Equal(t, `["g","0s"]`, gjson.GetBytes(body, "rows.0.cells").Raw)
}
