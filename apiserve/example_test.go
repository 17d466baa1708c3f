package apiserve_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
)

// kubectl get asks for a Table, and prints the cells the server fills.
func ExampleNegotiate() {
	out, err := apiserve.Negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
	fmt.Println(out.Table, out.TableVersion, err == nil)
	_, err = apiserve.Negotiate("application/vnd.kubernetes.protobuf")
	fmt.Println(err)
	// Output:
	// true v1 true
	// only the following media types are accepted: application/json
}

func ExamplePrinterFor() {
	p := apiserve.PrinterFor("", "configmaps")
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	table := apiserve.AppendTable(nil, p,
		[][]byte{[]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"app","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"a":"1"}}`)},
		apiserve.ListMeta{ResourceVersion: "7"},
		apiserve.TableRequest{Include: apiserve.IncludeNone, NoHeaders: true, Now: created.Add(3 * time.Minute)})
	fmt.Println(string(table))
	// Output:
	// {"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},"columnDefinitions":null,"rows":[{"cells":["app",1,"3m"],"object":null}]}
}

// A watch from "0" with bookmarks: the state as ADDED events, then the
// bookmark that ends them; the watch follows until its context ends.
func ExampleServeWatch() {
	h := newHist(clock.Real, 1)
	h.set("a", "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // here: stop once the initial events are out
	rec := httptest.NewRecorder()
	apiserve.ServeWatch(ctx, rec, sel{h, ""}, apiserve.WatchQuery{ResourceVersion: "0", AllowBookmarks: true},
		apiserve.WatchStream{Layout: apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}})
	fmt.Print(rec.Body.String())
	// Output:
	// {"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","labels":{"app":"x"},"resourceVersion":"2"}}}
	// {"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"annotations":{"k8s.io/initial-events-end":"true"},"resourceVersion":"2"}}}
}
