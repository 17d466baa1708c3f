package apiserve_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/testkit/watchers"
)

// BenchmarkServeWatchFanOut records each event once in a History and
// serves it to 100 watchers over local HTTP; one op is one event
// delivered to all of them (events/s across the watchers is 100 ×
// ops/s).
func BenchmarkServeWatchFanOut(b *testing.B) {
	const n = 100
	h := newHist(clock.Real, 1)
	h.set("a", "x") // 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiserve.ServeWatch(r.Context(), w, sel{h, ""}, apiserve.WatchQuery{ResourceVersion: "2", StartRV: 2},
			apiserve.WatchStream{Layout: apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}})
	}))
	defer srv.Close()
	ws := watchers.Start(b, srv.URL, n, b.N, nil)
	b.ResetTimer()
	for i := range b.N {
		h.set("p"+strconv.Itoa(i%100), "x")
	}
	ws.Wait()
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
}

// flat is a Store of items in key order at version 1, nothing more: so
// that a benchmark measures the core.
type flat []apiserve.Item

func (f flat) WaitFor(context.Context, int64) (int64, bool) { return 1, true }
func (f flat) Read(g func(apiserve.View))                   { g(f) }
func (f flat) ResourceVersion() int64                       { return 1 }
func (f flat) Floor() int64                                 { return 1 }
func (f flat) List(int64, string, int) ([]apiserve.Item, bool, int64) {
	return f, false, 0
}

// BenchmarkServeList10k writes a list of 10,000 objects of about 1 KiB,
// half of them whole as a watch delivers them, into memory: the core's
// share of a list's cost.
func BenchmarkServeList10k(b *testing.B) {
	filler := strings.Repeat("x", 900)
	st := make(flat, 10_000)
	for i := range st {
		kind := ""
		if i%2 == 0 {
			kind = `"kind":"ConfigMap","apiVersion":"v1",`
		}
		st[i] = apiserve.Item{Key: fmt.Sprintf("ns/cm-%05d", i), Body: fmt.Appendf(nil, `{%s"metadata":{"name":"cm-%05d","resourceVersion":"1"},"data":{"x":%q}}`, kind, i, filler)}
	}
	l := apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}
	var n int
	for b.Loop() {
		rec := httptest.NewRecorder()
		apiserve.ServeList(context.Background(), rec, st, apiserve.ListQuery{}, l, nil)
		n = rec.Body.Len()
	}
	b.SetBytes(int64(n))
}
