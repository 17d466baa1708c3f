package raw

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An item that lacks kind and apiVersion gets the list's: the metadata
// fields are still found in the copy, shifted by what was inserted (and by
// a managedFields cut). An item that has a kind keeps it, also when a
// repeated key makes it be read again without repeats.
func TestListItemTypeMetaAndFields(t *testing.T) {
	const meta = `"metadata":{"namespace":"ns","name":"web","managedFields":[{"m":1}],"uid":"u-1","resourceVersion":"7"}`
	for _, tc := range []struct {
		name, item string
		drop       bool
		want       string
	}{
		{"inserted", `{` + meta + `}`, false, `{"kind":"Pod","apiVersion":"v1",` + meta + `}`},
		{"inserted, managedFields dropped", `{` + meta + `}`, true,
			`{"kind":"Pod","apiVersion":"v1","metadata":{"namespace":"ns","name":"web","uid":"u-1","resourceVersion":"7"}}`},
		{"its own kind after a repeated metadata", `{"metadata":{"name":"old"},` + meta + `,"kind":"Pod","apiVersion":"v1"}`, false,
			`{` + meta + `,"kind":"Pod","apiVersion":"v1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := `{"kind":"PodList","apiVersion":"v1","items":[` + tc.item + `]}`
			p, err := (&Decoder{DropManagedFields: tc.drop}).DecodeList(strings.NewReader(list), 0)
			require.NoError(t, err)
			require.Len(t, p.Items, 1)
			o := p.Items[0]
			assert.Equal(t, tc.want, o.String())
			assert.Equal(t, "ns", o.Namespace())
			assert.Equal(t, "web", o.Name())
			assert.Equal(t, "u-1", o.UID())
			assert.Equal(t, "7", o.ResourceVersion())
			assert.Equal(t, "Pod", o.Kind())
		})
	}
}

// The compact span table holds offsets below 64 KiB; a field that starts at
// 64 KiB exactly needs the wide one.
func TestObjectTableWideFrom64KiB(t *testing.T) {
	const head, tail = `{"data":"`, `","metadata":{"namespace":"ns","uid":"u-1","name":"`
	for _, tc := range []struct {
		nameAt   int // offset of the name's first byte in the JSON
		wantWide bool
	}{
		{1<<16 - 1, false},
		{1 << 16, true},
	} {
		raw := head + strings.Repeat("x", tc.nameAt-len(head)-len(tail)) + tail + `web"}}`
		o, err := NewObject([]byte(raw))
		require.NoError(t, err)
		require.Equal(t, tc.nameAt, strings.Index(raw, `web"}}`))
		assert.Equal(t, "web", o.Name(), "name at %d", tc.nameAt)
		assert.Equal(t, "ns", o.Namespace())
		assert.Equal(t, "u-1", o.UID())
		assert.Equal(t, tc.wantWide, o.header()&wideTable != 0, "name at %d", tc.nameAt)
	}
}

// Dropping managedFields, the only member of metadata, leaves the rest of
// the metadata as it was, spaces included, whether the object is read by
// Decode or from the notes a watch event's framing took.
func TestDropManagedFieldsOnlyMember(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"metadata":{"managedFields":[{"m":1}]},"kind":"K"}`, `{"metadata":{},"kind":"K"}`},
		{`{"metadata":{ "managedFields":[{"m":1}]},"kind":"K"}`, `{"metadata":{ },"kind":"K"}`},
		{`{"metadata":{ "managedFields":[{"m":1}] },"kind":"K"}`, `{"metadata":{  },"kind":"K"}`},
	} {
		d := &Decoder{DropManagedFields: true}
		o, err := d.Decode([]byte(tc.in))
		require.NoError(t, err)
		assert.Equal(t, tc.want, o.String(), "Decode %s", tc.in)
		require.True(t, json.Valid(o.Raw()))

		f, err := d.Events(strings.NewReader(`{"type":"ADDED","object":` + tc.in + `}`)).Next()
		require.NoError(t, err)
		w, err := f.Object()
		require.NoError(t, err)
		assert.Equal(t, tc.want, w.String(), "watch event %s", tc.in)
	}
}

// An empty key is a key like any other, at the top, in metadata and
// repeated.
func TestObjectEmptyKeys(t *testing.T) {
	for _, tc := range []struct{ in, want, name string }{
		{`{"":1,"metadata":{"":2,"name":"a"}}`, `{"":1,"metadata":{"":2,"name":"a"}}`, "a"},
		{`{"":1,"metadata":{"name":"a"},"":3}`, `{"metadata":{"name":"a"},"":3}`, "a"},
		{`{"metadata":{"":1,"name":"a","":2}}`, `{"metadata":{"name":"a","":2}}`, "a"},
	} {
		o, err := NewObject([]byte(tc.in))
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, o.String(), tc.in)
		assert.Equal(t, tc.name, o.Name(), tc.in)
	}
}

// Escaped metadata values are decoded into the object's one allocation:
// building such an object costs the decoding's own allocations and no
// more.
func TestEscapedMetadataInTheOneAllocation(t *testing.T) {
	long := strings.Repeat("w", 200)
	lit := []byte(`"\u0077` + long[1:] + `"`)
	plain := []byte(`{"metadata":{"name":"` + long + `"}}`)
	escaped := []byte(`{"metadata":{"name":` + string(lit) + `}}`)
	o, err := NewObject(escaped)
	require.NoError(t, err)
	require.Equal(t, long, o.Name())

	build := testing.AllocsPerRun(50, func() { _, _ = NewObject(plain) })
	decode := testing.AllocsPerRun(50, func() { _, _ = unquote(lit) })
	both := testing.AllocsPerRun(50, func() { _, _ = NewObject(escaped) })
	assert.LessOrEqual(t, both, build+decode, "allocations: object %v, decoding %v", build, decode)
}
