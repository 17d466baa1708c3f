package raw

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dupMeta is what the accessors should read from an object with repeated
// keys: the last of each, as the API server's decoder and encoding/json
// take them.
type dupMeta struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		UID             string            `json:"uid"`
		Generation      int               `json:"generation"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
}

var duplicateKeyObjects = []struct {
	name string
	obj  string
	want dupMeta
}{
	{"every metadata field twice",
		`{"metadata":{"name":"a","namespace":"n1","name":"b","resourceVersion":"1","uid":"u1","namespace":"n2","resourceVersion":"2","uid":"u2"}}`,
		meta("", "b", "n2", "2", "u2", 0)},
	{"a field three times",
		`{"metadata":{"name":"a","name":"b","uid":"u","name":"c"}}`,
		meta("", "c", "", "", "u", 0)},
	{"a field not located",
		`{"metadata":{"name":"a","generation":1,"generation":2}}`,
		meta("", "a", "", "", "", 2)},
	{"escaped and plain spellings",
		`{"metadata":{"name":"a","na\u006de":"b"}}`,
		meta("", "b", "", "", "", 0)},
	{"metadata twice",
		`{"metadata":{"name":"a","namespace":"n"},"spec":{"x":[1]},"metadata":{"name":"b","uid":"u"}}`,
		meta("", "b", "", "", "u", 0)},
	{"metadata then null",
		`{"metadata":{"name":"a"},"metadata":null}`,
		meta("", "", "", "", "", 0)},
	{"more container members than the scanner notes",
		`{"a":{},"b":[],"c":{"x":[]},"d":[{}],"e":{},"f":[],"g":{},"h":[],"metadata":{"name":"a"},"i":{},"metadata":{"name":"b"},"j":[]}`,
		meta("", "b", "", "", "", 0)},
	{"kind twice",
		`{"kind":"A","metadata":{"name":"a"},"kind":"B"}`,
		meta("B", "a", "", "", "", 0)},
	{"managedFields twice, last",
		`{"metadata":{"name":"a","managedFields":[1],"managedFields":[2]}}`,
		meta("", "a", "", "", "", 0)},
	{"managedFields twice, first",
		`{"metadata":{"managedFields":[1],"name":"a","managedFields":[2],"uid":"u"}}`,
		meta("", "a", "", "", "u", 0)},
}

func meta(kind, name, ns, rv, uid string, gen int) dupMeta {
	var m dupMeta
	m.Kind = kind
	m.Metadata.Name, m.Metadata.Namespace, m.Metadata.ResourceVersion, m.Metadata.UID = name, ns, rv, uid
	m.Metadata.Generation = gen
	return m
}

// checkAgree checks every accessor of o against want.
func checkAgree(t *testing.T, o *Object, want dupMeta, msg string) {
	t.Helper()
	var decoded dupMeta
	require.NoError(t, o.Decode(&decoded), msg)
	require.Equal(t, want, decoded, "Decode: %s", msg)
	m := want.Metadata
	require.Equal(t, m.Name, o.Name(), "Name: %s", msg)
	require.Equal(t, m.Namespace, o.Namespace(), "Namespace: %s", msg)
	require.Equal(t, m.ResourceVersion, o.ResourceVersion(), "ResourceVersion: %s", msg)
	require.Equal(t, m.UID, o.UID(), "UID: %s", msg)
	require.Equal(t, want.Kind, o.Kind(), "Kind: %s", msg)
	require.Equal(t, m.Name, o.Get("metadata.name").String(), "Get name: %s", msg)
	require.Equal(t, m.Namespace, o.Get("metadata.namespace").String(), "Get namespace: %s", msg)
	require.Equal(t, m.ResourceVersion, o.Get("metadata.resourceVersion").String(), "Get resourceVersion: %s", msg)
	require.Equal(t, m.UID, o.Get("metadata.uid").String(), "Get uid: %s", msg)
	require.EqualValues(t, m.Generation, o.Get("metadata.generation").Int(), "Get generation: %s", msg)
	require.Equal(t, want.Kind, o.Get("kind").String(), "Get kind: %s", msg)
	require.True(t, json.Valid(o.Raw()), "%s: %s", msg, o.Raw())
}

// TestDuplicateKeysLastWins (decision: the last of repeated keys counts, at
// the levels an Object reads, the top and metadata): NewObject, a watch
// event and a list item all give every accessor the same value.
func TestDuplicateKeysLastWins(t *testing.T) {
	for _, tc := range duplicateKeyObjects {
		for _, drop := range []bool{false, true} {
			so := &Decoder{DropManagedFields: drop}
			o, err := NewObject([]byte(tc.obj))
			require.NoError(t, err, tc.name)
			if drop {
				o, err = buildObject(o.Raw(), buildOptions{dropManagedFields: true, unique: true})
				require.NoError(t, err, tc.name)
			}
			checkAgree(t, o, tc.want, "NewObject: "+tc.name)

			w := newTestWatcher(strings.NewReader(`{"type":"ADDED","object":`+tc.obj+`}`), so)
			ev, err := w.Next()
			require.NoError(t, err, tc.name)
			checkAgree(t, ev.Object, tc.want, "watch: "+tc.name)

			p, err := so.DecodeList(strings.NewReader(`{"kind":"List","apiVersion":"v1","items":[`+tc.obj+`]}`), 0)
			require.NoError(t, err, tc.name)
			checkAgree(t, p.Items[0], tc.want, "list: "+tc.name)
			if drop {
				require.NotContains(t, p.Items[0].String(), "managedFields", tc.name)
			}
		}
	}
}

// TestDuplicateLabelKeys: Label, Annotation and Labels agree with Decode on
// a repeated key (the last), although Get, which reads the first below
// metadata, does not (decision: deeper levels keep their duplicates).
func TestDuplicateLabelKeys(t *testing.T) {
	o, err := NewObject([]byte(`{"metadata":{"labels":{"k":"1","x":"y","k":"2"},"annotations":{"a":"1","a":"2"}}}`))
	require.NoError(t, err)
	v, ok := o.Label("k")
	require.True(t, ok)
	require.Equal(t, "2", v)
	require.Equal(t, map[string]string{"k": "2", "x": "y"}, o.Labels())
	v, ok = o.Annotation("a")
	require.True(t, ok)
	require.Equal(t, "2", v)
	var decoded dupMeta
	require.NoError(t, o.Decode(&decoded))
	require.Equal(t, "2", decoded.Metadata.Labels["k"])
}
