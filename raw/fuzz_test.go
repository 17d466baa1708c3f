package raw

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
)

const fuzzMaxFrame = 1 << 16

// addFixtureSeeds seeds a fuzz target with every recorded response.
func addFixtureSeeds(f *testing.F) {
	for _, name := range fixtures.Names() {
		b := fixtures.Load(f, name).Body
		f.Add(b, uint16(len(b)/2))
	}
	f.Add([]byte(`{"a":"\\\"}"}[1,{"b":[]}]`), uint16(5))
	f.Add([]byte(`{"type":"ADDED","object":{"metadata":{"name":"a\u0062"}}}`), uint16(30))
	// Brackets that balance in number only; repeated keys; a long string
	// with escapes at the list's top level; more members than the scanner
	// notes.
	f.Add([]byte(`{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":[}{]}}`), uint16(40))
	f.Add([]byte(`{"type":"ADDED","object":{"metadata":{"name":"a","name":"b"},"spec":{},"metadata":{"uid":"u"}}}`), uint16(50))
	f.Add([]byte(`{"kind":"PodList","apiVersion":"v1","x":"`+strings.Repeat(`ab\"\\\u00e9`, 40)+
		`","items":[{"metadata":{"name":"a","name":"b"}},{"kind":"K","kind":"L"}]}`), uint16(200))
	f.Add([]byte(`{"kind":"List","items":[{"a":{},"b":[],"c":{},"d":[],"e":{},"f":[],"g":{},"h":[],"i":{},`+
		`"metadata":{"name":"x"},"metadata":{"name":"y"}}]}`), uint16(60))
}

// frames runs a framer over chunks until it fails or ends.
func frames(t *testing.T, chunks [][]byte) ([]string, error) {
	fr := newFramer(&chunkReader{chunks: chunks}, fuzzMaxFrame)
	var out []string
	for {
		b, err := fr.Next()
		if err != nil {
			if c := cap(fr.rd.buf); c > max(initialBufSize, fuzzMaxFrame+1) {
				t.Fatalf("buffer grew to %d bytes past the %d-byte frame limit", c, fuzzMaxFrame)
			}
			return out, err
		}
		if len(b) > fuzzMaxFrame {
			t.Fatalf("frame of %d bytes over the limit", len(b))
		}
		out = append(out, string(b))
	}
}

// FuzzFramer: no panic, bounded memory, the same frames however the input
// is chunked, and exactly encoding/json's values when the input is a valid
// sequence of objects and arrays.
func FuzzFramer(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		whole, err := frames(t, [][]byte{data})
		at := int(cut) % (len(data) + 1)
		split, serr := frames(t, splitAt(data, at))
		if !equalLines(whole, split) || (err == io.EOF) != (serr == io.EOF) {
			t.Fatalf("split at %d changed the result: %q %v vs %q %v", at, whole, err, split, serr)
		}
		if err != io.EOF {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		for i := 0; ; i++ {
			var v json.RawMessage
			if derr := dec.Decode(&v); derr == io.EOF {
				if i != len(whole) {
					t.Fatalf("framer found %d frames, encoding/json %d", len(whole), i)
				}
				return
			} else if derr != nil {
				return // the framer checks structure, not every token
			}
			if i >= len(whole) || whole[i] != string(v) {
				t.Fatalf("frame %d: framer %q, encoding/json %q", i, whole, v)
			}
		}
	})
}

func events(t *testing.T, chunks [][]byte) ([]string, error) {
	w := newTestWatcher(&chunkReader{chunks: chunks}, &Decoder{MaxFrameSize: fuzzMaxFrame})
	var out []string
	for {
		ev, err := w.Next()
		if err != nil {
			return out, err
		}
		s := string(ev.Type)
		if ev.Object == nil {
			t.Fatalf("%s event without an object", ev.Type)
		}
		if o := ev.Object; o != nil {
			accessorsAgree(t, o)
			s += " " + o.Namespace() + "/" + o.Name() + " " + o.ResourceVersion() + " " + o.UID() + " " + o.String()
			o.Labels()
			o.OwnerUIDs()
		}
		out = append(out, s)
	}
}

// FuzzWatchDecode: any byte stream decodes to events or a clear error,
// never a panic, and the same events however it is chunked.
func FuzzWatchDecode(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		whole, err := events(t, [][]byte{data})
		at := int(cut) % (len(data) + 1)
		split, serr := events(t, splitAt(data, at))
		if !equalLines(whole, split) || (err == io.EOF) != (serr == io.EOF) {
			t.Fatalf("split at %d changed the result: %q %v vs %q %v", at, whole, err, split, serr)
		}
		var de *InputError
		if err != io.EOF && !errors.As(err, &de) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("error of an unexpected kind: %v", err)
		}
	})
}

// accessorsAgree checks that the located metadata fields read as Get reads
// them, whatever keys the object repeats.
func accessorsAgree(t *testing.T, o *Object) {
	t.Helper()
	for path, got := range map[string]string{
		"metadata.name": o.Name(), "metadata.namespace": o.Namespace(),
		"metadata.resourceVersion": o.ResourceVersion(), "metadata.uid": o.UID(),
	} {
		if want := o.Get(path).String(); got != want {
			t.Fatalf("%s: accessor %q, Get %q in %s", path, got, want, o.Raw())
		}
	}
}

func listItems(chunks [][]byte, drop bool) ([]string, error) {
	p, err := (&Decoder{MaxFrameSize: fuzzMaxFrame, DropManagedFields: drop}).DecodeList(&chunkReader{chunks: chunks}, 0)
	if err != nil {
		return nil, err
	}
	out := []string{p.ResourceVersion + " " + p.Continue}
	for _, o := range p.Items {
		out = append(out, o.Namespace()+"/"+o.Name()+" "+o.ResourceVersion()+" "+o.UID()+" "+o.String())
	}
	return out, nil
}

// FuzzListScan: any body scans to a page or a clear error, never a panic,
// the same however it is chunked; valid JSON stays valid JSON after
// managedFields are dropped.
func FuzzListScan(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		whole, err := listItems([][]byte{data}, false)
		at := int(cut) % (len(data) + 1)
		split, serr := listItems(splitAt(data, at), false)
		if !equalLines(whole, split) || (err == nil) != (serr == nil) {
			t.Fatalf("split at %d changed the result: %q %v vs %q %v", at, whole, err, split, serr)
		}
		if err != nil || !json.Valid(data) {
			return
		}
		p, err := (&Decoder{MaxFrameSize: fuzzMaxFrame, DropManagedFields: true}).DecodeList(bytes.NewReader(data), 0)
		if err != nil {
			t.Fatalf("dropping managedFields failed where keeping them did not: %v", err)
		}
		for _, o := range p.Items {
			if !json.Valid(o.Raw()) {
				t.Fatalf("item became invalid JSON: %s", o.Raw())
			}
		}
	})
}
