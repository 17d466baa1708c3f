package raw

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestObjectWithSpaceAround: JSON whitespace before and after the object is
// JSON, as encoding/json.Valid says: NewObject keeps the copy of data it
// was given and locates the metadata in it, and Decode, dropping
// managedFields or projecting, reads the object behind the space too.
func TestObjectWithSpaceAround(t *testing.T) {
	const obj = `{"kind":"Pod","metadata":{"name":"a","namespace":"ns","uid":"u","managedFields":[{"m":1}]},"spec":{"x":1}}`
	proj, err := NewProjection("metadata.uid")
	require.NoError(t, err)
	for _, space := range []string{" ", "\n", "\t\r\n ", ""} {
		data := []byte(space + obj + space)
		require.True(t, json.Valid(data))

		o, err := NewObject(data)
		require.NoError(t, err, "%q", data)
		require.Equal(t, string(data), o.String())
		require.Equal(t, []string{"a", "ns", "u"}, []string{o.Name(), o.Namespace(), o.UID()})

		for _, d := range []*Decoder{{}, {DropManagedFields: true}, {Projection: proj}} {
			o, err := d.Decode(data)
			require.NoError(t, err, "%q", data)
			require.Equal(t, []string{"a", "ns", "u"}, []string{o.Name(), o.Namespace(), o.UID()}, "%q", data)
			var v struct{ Metadata map[string]any }
			require.NoError(t, json.Unmarshal(o.Raw(), &v))
			_, kept := v.Metadata["managedFields"]
			require.Equal(t, !d.DropManagedFields && d.Projection == nil, kept, "%q", data)
		}
	}
}
