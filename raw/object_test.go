package raw

import (
	"encoding/json"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestNewObject(t *testing.T) {
	o, err := NewObject([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web","namespace":"prod","resourceVersion":"12","uid":"u-1",` +
		`"labels":{"app.kubernetes.io/name":"web","tier":"front"},"annotations":{"a":"b"},` +
		`"ownerReferences":[{"uid":"o1","kind":"ReplicaSet"},{"uid":"o2"}]},"spec":{"nodeName":"n1"}}`))
	require.NoError(t, err)
	require.Equal(t, "prod", o.Namespace())
	require.Equal(t, "web", o.Name())
	require.Equal(t, "12", o.ResourceVersion())
	require.Equal(t, "u-1", o.UID())
	require.Equal(t, "Pod", o.Kind())
	require.Equal(t, "v1", o.APIVersion())
	require.Equal(t, "n1", o.Get("spec.nodeName").String())
	require.Equal(t, map[string]string{"app.kubernetes.io/name": "web", "tier": "front"}, o.Labels())
	require.Equal(t, map[string]string{"a": "b"}, o.Annotations())
	v, ok := o.Label("app.kubernetes.io/name")
	require.True(t, ok)
	require.Equal(t, "web", v)
	_, ok = o.Label("missing")
	require.False(t, ok)
	require.Equal(t, []string{"o1", "o2"}, o.OwnerUIDs())
	var pod struct {
		Spec struct{ NodeName string }
	}
	require.NoError(t, o.Decode(&pod))
	require.Equal(t, "n1", pod.Spec.NodeName)
	require.Error(t, o.Decode(&[]int{}))

	empty, err := NewObject([]byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, "", empty.Name())
	require.Nil(t, empty.Labels())
	require.Nil(t, empty.OwnerUIDs())
	require.Equal(t, "", empty.Kind())
}

// The metadata strings point into the object's own bytes: no copies.
func TestObjectStringsShareTheJSON(t *testing.T) {
	raw := []byte(`{"metadata":{"name":"web","namespace":"prod"}}`)
	o, err := NewObject(raw)
	require.NoError(t, err)
	base := uintptr(unsafe.Pointer(&o.Raw()[0]))
	name := uintptr(unsafe.Pointer(unsafe.StringData(o.Name())))
	require.True(t, name > base && name < base+uintptr(len(raw)))
	require.Equal(t, unsafe.Sizeof(uintptr(0)), unsafe.Sizeof(Object{}), "an Object is one pointer")
	raw[15] = 'X'
	require.Equal(t, "web", o.Name(), "NewObject copied its input")
	var zero Object
	require.Equal(t, "", zero.Name())
	require.Equal(t, "", zero.UID())
}

// TestObjectTableWidths: the compact span table (16-bit offsets,
// 8-bit lengths) and the wide one, chosen per object, read back the same.
func TestObjectTableWidths(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name      string
		data      int // bytes of padding before metadata
		nameLen   int
		escaped   bool
		wantWide  bool
		wantTable int
	}{
		{"small", 10, 5, false, false, compactSize},
		{"name of 255 bytes", 10, 255, false, false, compactSize},
		{"name of 256 bytes", 10, 256, false, true, wideSize},
		{"fields just below 64 KiB", 1<<16 - 128, 5, false, false, compactSize},
		{"name past 64 KiB", 1 << 16, 5, false, true, wideSize},
		{"escaped past 64 KiB", 1 << 16, 5, true, true, wideSize},
		{"escaped", 10, 5, true, false, compactSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := pad(tc.nameLen)
			lit := name
			if tc.escaped {
				lit = `\u0078` + name[1:]
			}
			prefix := `{"data":"` + pad(tc.data) + `","metadata":{"namespace":"ns","name":"`
			raw := prefix + lit + `","uid":"u-1","resourceVersion":"7"}}`
			o, err := NewObject([]byte(raw))
			require.NoError(t, err)
			require.Equal(t, raw, o.String())
			require.Equal(t, name, o.Name())
			require.Equal(t, "ns", o.Namespace())
			require.Equal(t, "u-1", o.UID())
			require.Equal(t, "7", o.ResourceVersion())
			h := o.header()
			require.Equal(t, tc.wantWide, h&wideTable != 0)
			require.Equal(t, tc.wantTable, tableSize(h))
			require.Equal(t, len(raw), int(h&^wideTable))
			if !tc.escaped {
				require.Equal(t, len(prefix), int(uintptr(unsafe.Pointer(unsafe.StringData(o.Name())))-uintptr(o.json(h))),
					"the name points into the JSON")
			}
		})
	}
}

func TestNewObjectRejects(t *testing.T) {
	for _, bad := range []string{
		``, `nope`, `[1]`, `"s"`, `{"a":}`, `{"metadata":[]}`, `{"metadata":{"name":1}}`,
		`{"metadata":{"uid":{}}}`, `{} {}`,
	} {
		_, err := NewObject([]byte(bad))
		require.Error(t, err, bad)
	}
	o, err := NewObject([]byte(`{"metadata":{"name":null}}`))
	require.NoError(t, err)
	require.Equal(t, "", o.Name())
}

// Escaped metadata values are decoded once, into the object's allocation.
func TestObjectEscapedMetadata(t *testing.T) {
	raw := `{"metadata":{"name":"a\u002db","namespace":"n\"s","uid":"x\\y"}}`
	o, err := NewObject([]byte(raw))
	require.NoError(t, err)
	require.Equal(t, "a-b", o.Name())
	require.Equal(t, `n"s`, o.Namespace())
	require.Equal(t, `x\y`, o.UID())
	require.Equal(t, raw, o.String(), "the JSON itself is unchanged")
	require.True(t, json.Valid(o.Raw()))
}

func TestDropManagedFields(t *testing.T) {
	const mf = `"managedFields":[{"manager":"m","fieldsV1":{"f:a":{"k:{\"x\":1}":{}}}}]`
	for _, tc := range []struct{ name, in, want string }{
		{"middle", `{"metadata":{"name":"a",` + mf + `,"uid":"u"},"x":1}`, `{"metadata":{"name":"a","uid":"u"},"x":1}`},
		{"first", `{"metadata":{` + mf + `, "name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{"last", `{"metadata":{"name":"a" , ` + mf + `}}`, `{"metadata":{"name":"a"}}`},
		{"only", `{"metadata":{` + mf + `}}`, `{"metadata":{}}`},
		{"pretty", "{\n  \"metadata\": {\n    \"name\": \"a\",\n    " + mf + ",\n    \"uid\": \"u\"\n  }\n}", "{\n  \"metadata\": {\n    \"name\": \"a\",\n    \"uid\": \"u\"\n  }\n}"},
		{"none", `{"metadata":{"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{"not in metadata", `{"spec":{` + mf + `},"metadata":{"name":"a"}}`, `{"spec":{` + mf + `},"metadata":{"name":"a"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewObject([]byte(tc.in))
			require.NoError(t, err)
			d, err := buildObject(o.Raw(), buildOptions{dropManagedFields: true})
			require.NoError(t, err)
			require.Equal(t, tc.want, d.String())
			require.True(t, json.Valid(d.Raw()))
			require.Equal(t, o.Name(), d.Name())
			require.Equal(t, tc.in, o.String(), "the original is untouched")
		})
	}
	// Every recorded object, compared with a decode-and-delete reference.
	for _, fx := range listFixtures(t) {
		p, err := (&Decoder{DropManagedFields: true}).DecodeList(strings.NewReader(string(fx.Body)), 0)
		require.NoError(t, err)
		full, err := (&Decoder{}).DecodeList(strings.NewReader(string(fx.Body)), 0)
		require.NoError(t, err)
		for i, o := range p.Items {
			var ref map[string]any
			require.NoError(t, json.Unmarshal(full.Items[i].Raw(), &ref))
			delete(ref["metadata"].(map[string]any), "managedFields")
			var got map[string]any
			require.NoError(t, json.Unmarshal(o.Raw(), &got))
			require.Equal(t, ref, got)
			require.Equal(t, full.Items[i].UID(), o.UID())
			require.Less(t, len(o.Raw()), len(full.Items[i].Raw()))
		}
	}
}

func TestTypeMetaInsertion(t *testing.T) {
	for _, tc := range []struct{ name, list, want string }{
		{"built-in", `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}`},
		{"empty item", `{"kind":"PodList","apiVersion":"v1","items":[{}]}`, `{"kind":"Pod","apiVersion":"v1"}`},
		{"item has its own", `{"kind":"WidgetList","apiVersion":"x/v1","items":[{"kind":"Widget","apiVersion":"x/v1"}]}`, `{"kind":"Widget","apiVersion":"x/v1"}`},
		{"generic List", `{"kind":"List","apiVersion":"v1","items":[{"metadata":{}}]}`, `{"metadata":{}}`},
		{"kind after items", `{"apiVersion":"v1","items":[{"metadata":{}}],"kind":"PodList"}`, `{"metadata":{}}`},
		{"escaped list kind", `{"kind":"Pod\u0058List","apiVersion":"v1","items":[{}]}`, `{"kind":"PodX","apiVersion":"v1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := (&Decoder{}).DecodeList(strings.NewReader(tc.list), 0)
			require.NoError(t, err)
			require.Len(t, p.Items, 1)
			require.Equal(t, tc.want, p.Items[0].String())
		})
	}
}

func TestListScanAcceptsAnyLayout(t *testing.T) {
	for _, body := range []string{
		`{"items":null}`, `{}`, ` { "metadata" : null , "items" : [ ] } `,
		`{"extra":{"deep":[1,{"x":"]"}]},"n":-1.5e3,"b":true,"items":[]}`,
	} {
		p, err := (&Decoder{}).DecodeList(strings.NewReader(body), 0)
		require.NoError(t, err, body)
		require.Empty(t, p.Items)
	}
	p, err := (&Decoder{}).DecodeList(strings.NewReader(`{"metadata":{"resourceVersion":"9","continue":"c","remainingItemCount":4},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`), 0)
	require.NoError(t, err)
	require.Equal(t, "9", p.ResourceVersion)
	require.Equal(t, "c", p.Continue)
	require.EqualValues(t, 4, *p.RemainingItemCount)
	require.Len(t, p.Items, 2)
}

func TestFramer(t *testing.T) {
	in := ` {"a":"}{\"\\"} [1,[2]]` + "\n\t" + `{"b":{"c":"]"}}{}`
	f := newFramer(strings.NewReader(in), 0)
	var got []string
	for {
		b, err := f.Next()
		if err != nil {
			require.Equal(t, "EOF", err.Error())
			break
		}
		got = append(got, string(b))
	}
	require.Equal(t, []string{`{"a":"}{\"\\"}`, `[1,[2]]`, `{"b":{"c":"]"}}`, `{}`}, got)
	require.EqualValues(t, len(in), f.Offset())

	for _, tc := range []struct{ in, err string }{
		{`{"a":1]]`, `mismatched bracket at byte 6`},
		{`[[}]]`, `mismatched bracket at byte 2`}, // at any depth
		{`{"a" 1}`, `expected ':' after a key, found '1' at byte 5`},
		{`{"a":1}}`, `expected a JSON object or array, found '}'`},
		{`1`, `expected a JSON object or array`},
		{`{"a":"x`, `unexpected EOF`},
		{`{"a":"` + strings.Repeat("x", 100) + `"}`, `frame size limit`},
	} {
		f := newFramer(strings.NewReader(tc.in), 64)
		var err error
		for err == nil {
			_, err = f.Next()
		}
		require.ErrorContains(t, err, tc.err, tc.in)
		_, again := f.Next()
		require.Equal(t, err, again, "errors stick")
	}
}
