package raw

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What UnmarshalBinary accepts of a layout and what it refuses (decision
// 32): a field whose bytes run past the data is refused; a field of no
// bytes is absent wherever its offset points; a decoded value stored just
// after the JSON is kept. Whatever it accepts, MarshalBinary gives back
// byte for byte.
func TestBinaryLayoutBounds(t *testing.T) {
	// setSpan sets field f of a compact table in an encoding b.
	setSpan := func(b []byte, f, off, size int) []byte {
		b = append([]byte(nil), b...)
		binary.LittleEndian.PutUint16(b[1+headerSize+3*f:], uint16(off))
		b[1+headerSize+3*f+2] = byte(size)
		return b
	}
	plain, err := NewObject([]byte(`{"metadata":{"name":"web"}}`))
	require.NoError(t, err)
	pb, err := plain.MarshalBinary()
	require.NoError(t, err)
	n := len(plain.Raw())
	require.Equal(t, 1+headerSize+compactSize+n, len(pb), "a compact table and no decoded values")

	// One escaped field: its decoded value is the only thing after the
	// JSON, and starts exactly where the JSON ends.
	escaped, err := NewObject([]byte(`{"metadata":{"name":"w\u0065b"}}`))
	require.NoError(t, err)
	eb, err := escaped.MarshalBinary()
	require.NoError(t, err)

	for _, tc := range []struct {
		name     string
		data     []byte
		wantName string
		refused  bool
	}{
		{"decoded value just after the JSON", eb, "web", false},
		{"absent field with an offset past the data", setSpan(pb, fNamespace, n+5, 0), "web", false},
		{"field running past the data", setSpan(pb, fName, n-2, 10), "", true},
		{"field starting past the data", setSpan(pb, fName, n+1, 1), "", true},
		{"field ending exactly at the data's end", setSpan(pb, fName, n-3, 3), `"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o Object
			err := o.UnmarshalBinary(tc.data)
			if tc.refused {
				require.ErrorContains(t, err, "out of bounds")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantName, o.Name())
			assert.Equal(t, "", o.Namespace())
			again, err := o.MarshalBinary()
			require.NoError(t, err)
			assert.Equal(t, tc.data, again, "the same bytes again")
		})
	}
}

// An encoding too short to hold a header is cut short; one that holds a
// header but not its table and JSON says how long it is.
func TestBinaryRefusesShortForms(t *testing.T) {
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{[]byte{BinaryVersion}, "raw: binary form cut short"},
		{[]byte{BinaryVersion, 2, 0, 0}, "raw: binary form cut short"},
		{[]byte{BinaryVersion, 2, 0, 0, 0}, "raw: binary form of 4 bytes holds no JSON of 2"},
		{[]byte{BinaryVersion, 2, 0, 0, 0, '{', '}'}, "raw: binary form of 6 bytes holds no JSON of 2"},
	} {
		var o Object
		assert.EqualError(t, o.UnmarshalBinary(tc.data), tc.want, "%v", tc.data)
	}
}
