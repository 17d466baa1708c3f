package httpwatch

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds adds every recorded fixture whose name has the suffix.
func fuzzSeeds(f *testing.F, suffix string) {
	paths, err := filepath.Glob(filepath.Join("testdata", "kube-apiserver-1.37", "*"+suffix))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// fuzzFrameLimit keeps memory bounded whatever the input claims.
const fuzzFrameLimit = 1 << 16

// The watch decoder never panics, never hands out a frame over its limit,
// and every event it returns is well formed.
func FuzzWatchDecode(f *testing.F) {
	fuzzSeeds(f, ".jsonl")
	f.Add([]byte(`{"type":"ADDED","object":{"metadata":{"name":"a\"}"}}}{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newStreamWatcher(io.NopCloser(bytes.NewReader(data)), func() {}, "WATCH", "/fuzz", &scanOptions{maxFrame: fuzzFrameLimit})
		defer w.Stop()
		for range 10000 {
			ev, err := w.Next()
			if err != nil {
				return
			}
			switch ev.Type {
			case Added, Modified, Deleted, Bookmark:
				if ev.Object == nil {
					t.Fatalf("%s event without an object", ev.Type)
				}
				if len(ev.Object.Raw()) > fuzzFrameLimit {
					t.Fatalf("object of %d bytes over the %d limit", len(ev.Object.Raw()), fuzzFrameLimit)
				}
			case Error:
				if ev.Err == nil {
					t.Fatal("ERROR event without an error")
				}
			default:
				t.Fatalf("unknown event type %q", ev.Type)
			}
		}
	})
}

// The framer splits any input into frames no longer than its limit, and
// the frames of a well-formed stream concatenate back to its values.
func FuzzFramer(f *testing.F) {
	fuzzSeeds(f, ".jsonl")
	f.Add([]byte(`{"a":"\\"} [1,2] {"b":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := NewFramer(bytes.NewReader(data), fuzzFrameLimit)
		var total int
		for range 10000 {
			b, err := fr.Next()
			if err != nil {
				return
			}
			if len(b) > fuzzFrameLimit {
				t.Fatalf("frame of %d bytes over the %d limit", len(b), fuzzFrameLimit)
			}
			total += len(b)
			if total > len(data) {
				t.Fatalf("frames hold %d bytes, more than the %d read", total, len(data))
			}
		}
	})
}

// The list scanner never panics, and what it returns holds together: items
// are valid objects within the size limit.
func FuzzListScan(f *testing.F) {
	fuzzSeeds(f, ".json")
	f.Add([]byte(`{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"x"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := scanList(bytes.NewReader(data), &scanOptions{maxFrame: fuzzFrameLimit})
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		for _, o := range p.Items {
			if o == nil || len(o.Raw()) > fuzzFrameLimit {
				t.Fatalf("bad item %v", o)
			}
		}
	})
}
