package raw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeysEndingInAnEscapedQuoteName: a key whose last bytes are a wanted
// name behind an escaped quote ("x\"type", "\"uid", "a\"managedFields") is
// another key, as encoding/json reads it: the event's type, the metadata
// fields, whether the object has a kind and what DropManagedFields cuts
// are those of the real keys, in a watch event and in a list item, whole
// and cut at every byte.
func TestKeysEndingInAnEscapedQuoteName(t *testing.T) {
	for _, tc := range []struct {
		typ string // the event's type, when not ADDED
		obj string
	}{
		{`"type":"ADDED","x\"type":"DELETED"`, `{"metadata":{"name":"a"}}`},
		{`"type":"ADDED","\"type":"DELETED"`, `{"metadata":{"name":"a"}}`},
		{`"type":"ADDED"`, `{"metadata":{"name":"a","x\"uid":"u","\"namespace":"n","\\\"resourceVersion":"9"}}`},
		{`"type":"ADDED"`, `{"metadata":{"x\"name":"b"}}`},
		{`"type":"ADDED"`, `{"x\"kind":"K","\"apiVersion":"v","metadata":{"name":"a"}}`},
		{`"type":"ADDED"`, `{"metadata":{"name":"a","a\"managedFields":[{"m":1}],"x":1}}`},
		{`"type":"ADDED"`, `{"metadata":{"name":"a","managedFields":[{"m":1}],"\"managedFields":[{"m":2}]}}`},
		{`"type":"ADDED"`, `{"m\"metadata":{"name":"b"},"metadata":{"name":"a","uid":"u"}}`},
	} {
		var wantObj struct {
			Kind, APIVersion string
			Metadata         struct{ Name, Namespace, UID, ResourceVersion string }
		}
		require.NoError(t, json.Unmarshal([]byte(tc.obj), &wantObj), tc.obj)
		dropped := dropManaged(t, tc.obj)

		frame := []byte(`{` + tc.typ + `,"object":` + tc.obj + "}\n")
		var wantEvent struct{ Type string }
		require.NoError(t, json.Unmarshal(frame, &wantEvent))
		for cut := 0; cut <= len(frame); cut++ {
			for _, drop := range []bool{false, true} {
				w := newTestWatcher(&chunkReader{chunks: splitAt(bytes.Clone(frame), cut)}, &Decoder{DropManagedFields: drop})
				ev, err := w.Next()
				require.NoError(t, err, "%s cut at %d", frame, cut)
				require.Equal(t, wantEvent.Type, ev.Type, "%s cut at %d", frame, cut)
				o := ev.Object
				m := wantObj.Metadata
				require.Equal(t, []string{m.Name, m.Namespace, m.UID, m.ResourceVersion},
					[]string{o.Name(), o.Namespace(), o.UID(), o.ResourceVersion()}, "%s cut at %d", frame, cut)
				want := tc.obj
				if drop {
					want = dropped
				}
				require.JSONEq(t, want, o.String(), "%s cut at %d, drop %v", frame, cut, drop)
			}
		}

		list := []byte(`{"kind":"PodList","apiVersion":"v1","items":[` + tc.obj + `]}`)
		want := tc.obj
		if wantObj.Kind == "" && wantObj.APIVersion == "" {
			want = `{"kind":"Pod","apiVersion":"v1",` + tc.obj[1:]
		}
		for cut := 0; cut <= len(list); cut++ {
			p, err := (&Decoder{}).DecodeList(&chunkReader{chunks: splitAt(bytes.Clone(list), cut)}, 0)
			require.NoError(t, err, "%s cut at %d", list, cut)
			require.Equal(t, want, p.Items[0].String(), "%s cut at %d", list, cut)
			require.Equal(t, wantObj.Metadata.UID, p.Items[0].UID())
		}
	}
}

// dropManaged is obj without metadata.managedFields, by encoding/json.
func dropManaged(t *testing.T, obj string) string {
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(obj), &v))
	if m, ok := v["metadata"].(map[string]any); ok {
		delete(m, "managedFields")
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}
