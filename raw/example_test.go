package raw_test

import (
	"fmt"
	"strings"

	"github.com/listwatch/listwatch/raw"
)

func ExampleDecoder_Events() {
	stream := `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":"7"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}}
{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"8"}}}`
	keep, err := raw.NewProjection("status.phase")
	if err != nil {
		panic(err)
	}
	events := (&raw.Decoder{Projection: keep}).Events(strings.NewReader(stream))
	for {
		f, err := events.Next()
		if err != nil {
			fmt.Println(err) // io.EOF at the end
			return
		}
		build := f.Object
		if f.Type == "BOOKMARK" {
			build = f.Plain // a bookmark is metadata, not an object to cut
		}
		o, err := build()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(f.Type, o.ResourceVersion(), o)
	}
	// Output:
	// ADDED 7 {"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":"7"},"status":{"phase":"Running"}}
	// BOOKMARK 8 {"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"8"}}
	// EOF
}

func ExampleDecoder_DecodeList() {
	body := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"12"},"items":[{"metadata":{"name":"a","namespace":"ns"},"data":{"k":"v"}}]}`
	list, err := (&raw.Decoder{}).DecodeList(strings.NewReader(body), 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(list.ResourceVersion, len(list.Items))
	// Items of a built-in list get the kind and apiVersion the wire leaves out.
	fmt.Println(list.Items[0])
	// Output:
	// 12 1
	// {"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"},"data":{"k":"v"}}
}
