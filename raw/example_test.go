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

// Framing on one goroutine and building on another: the framing goroutine
// hands over each read's frames, and the builder releases each batch once
// its objects are built, so its buffer can be read into again.
func ExampleEventReader_Batches() {
	stream := `{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"7"}}}
{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"8"}}}`
	batches := make(chan *raw.Batch, 2)
	go func() {
		defer close(batches)
		for b := range (&raw.Decoder{}).Events(strings.NewReader(stream)).Batches() {
			batches <- b
		}
	}()
	for b := range batches {
		for _, f := range b.Frames {
			o, err := f.Object()
			if err != nil {
				panic(err)
			}
			fmt.Println(f.Type, o.Name(), o.ResourceVersion())
		}
		if b.Err != nil {
			fmt.Println(b.Err) // io.EOF at the end
		}
		b.Release()
	}
	// Output:
	// ADDED a 7
	// MODIFIED a 8
	// EOF
}
