package patch

import (
	"encoding/base64"
	"maps"
	"slices"
)

// SecretData sets data, a Secret's, to the values of m as the API wants
// them: each base64-encoded (standard encoding, padded), so that binary
// values (a certificate, a key) go through unchanged and nobody encodes
// them by hand. A nil or empty m sets data to {}.
//
// In an apply patch data is then the keys the field manager owns: keys it
// applied before and left out now are removed. In a merge patch the keys
// are merged into those the Secret has, and a key left out stays; remove
// one with Remove(Path("data", key)).
func (b *Builder) SecretData(m map[string][]byte) *Builder {
	return b.secretData(len(m), func(yield func(string, []byte) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !yield(k, m[k]) {
				return
			}
		}
	})
}

// SecretStringData is SecretData for values held as strings, such as a
// ConfigMap's data: each is base64-encoded as its bytes. (It does not use
// the Secret's write-only stringData, which an apply patch would own
// apart from data and the server never returns.)
func (b *Builder) SecretStringData(m map[string]string) *Builder {
	return b.secretData(len(m), func(yield func(string, []byte) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !yield(k, []byte(m[k])) {
				return
			}
		}
	})
}

// secretData encodes the pairs of seq, in its order, as data's object.
func (b *Builder) secretData(n int, seq func(yield func(string, []byte) bool)) *Builder {
	obj := make([]byte, 0, 2+n*32)
	obj = append(obj, '{')
	first := true
	for k, v := range seq {
		if !first {
			obj = append(obj, ',')
		}
		first = false
		obj = appendString(obj, k)
		obj = append(obj, ':', '"')
		obj = base64.StdEncoding.AppendEncode(obj, v)
		obj = append(obj, '"')
	}
	obj = append(obj, '}')
	return b.set("data", obj)
}
