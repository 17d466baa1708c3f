package raw

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// binaryCases are objects of every layout: compact and wide tables,
// decoded escapes after the JSON, missing fields.
func binaryCases(t *testing.T) map[string]*Object {
	t.Helper()
	long := strings.Repeat("x", 70000)
	cases := map[string]string{
		"compact":  `{"kind":"Pod","metadata":{"name":"web","namespace":"prod","resourceVersion":"12","uid":"u-1"},"spec":{}}`,
		"escaped":  `{"metadata":{"name":"w\u0065b","namespace":"pr\u006fd","resourceVersion":"1\u0032"}}`,
		"wide":     `{"spec":{"pad":"` + long + `"},"metadata":{"name":"far","resourceVersion":"3"}}`,
		"nameless": `{"kind":"Status"}`,
		"empty":    `{}`,
	}
	out := map[string]*Object{}
	for name, js := range cases {
		o, err := NewObject([]byte(js))
		require.NoError(t, err, name)
		out[name] = o
	}
	return out
}

// Package snapshot keeps objects in their binary form (decision 32): it
// gives back the same object, every accessor reading the same.
func TestBinaryRoundTrip(t *testing.T) {
	for name, o := range binaryCases(t) {
		t.Run(name, func(t *testing.T) {
			b, err := o.AppendBinary([]byte("prefix"))
			require.NoError(t, err)
			require.Equal(t, "prefix", string(b[:6]))
			var back Object
			require.NoError(t, back.UnmarshalBinary(b[6:]))
			require.Equal(t, o.String(), back.String())
			require.Equal(t, o.Namespace(), back.Namespace())
			require.Equal(t, o.Name(), back.Name())
			require.Equal(t, o.ResourceVersion(), back.ResourceVersion())
			require.Equal(t, o.UID(), back.UID())
			again, err := back.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, b[6:], again, "the same bytes again")
		})
	}
	var zero Object
	_, err := zero.AppendBinary(nil)
	require.Error(t, err)
}

// decision 32: no input makes UnmarshalBinary fail to return or an
// accessor read out of bounds: cut, grown or with any byte of the header and table changed,
// it is refused or gives an Object whose fields lie within its bytes.
func TestBinaryRefusesBadLayouts(t *testing.T) {
	for name, o := range binaryCases(t) {
		b, err := o.MarshalBinary()
		require.NoError(t, err)
		for cut := range len(b) {
			if cut > 64 && cut < len(b)-64 {
				continue
			}
			var back Object
			if back.UnmarshalBinary(b[:cut]) == nil {
				readAll(&back)
			}
		}
		for i := 0; i < min(len(b), 1+headerSize+wideSize); i++ {
			for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff} {
				bad := append([]byte(nil), b...)
				bad[i] = v
				var back Object
				if back.UnmarshalBinary(bad) == nil {
					readAll(&back)
				}
			}
		}
		var back Object
		require.NoError(t, back.UnmarshalBinary(b), name)
		require.Error(t, back.UnmarshalBinary(b), "%s: into a used Object", name)
	}
	var o Object
	require.ErrorIs(t, o.UnmarshalBinary([]byte{BinaryVersion + 1, 0, 0, 0, 0}), ErrBinaryVersion)
	require.Error(t, o.UnmarshalBinary(nil))
	huge := binary.LittleEndian.AppendUint32([]byte{BinaryVersion}, 1<<30)
	require.Error(t, o.UnmarshalBinary(append(huge, make([]byte, compactSize)...)))
	require.False(t, errors.Is(o.UnmarshalBinary(nil), ErrBinaryVersion))
}

func readAll(o *Object) {
	_ = o.Namespace() + o.Name() + o.ResourceVersion() + o.UID() + o.String()
}
