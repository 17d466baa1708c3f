package httpwatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// buildOptions say how buildObject turns a JSON object into an Object.
type buildOptions struct {
	// dropManagedFields leaves metadata.managedFields out of the copy.
	dropManagedFields bool
	// typeMeta, e.g. `"kind":"Pod","apiVersion":"v1"`, is inserted first in
	// an object that has neither kind nor apiVersion.
	typeMeta []byte
	// unique says src has no repeated keys at the levels read: it is an
	// Object's JSON, or withoutDuplicates made it. Then what follows
	// metadata need not be read when nothing is inserted.
	unique bool
	// known are members of src that need not be scanned again.
	known knownSpans
}

// Indices of the metadata fields an Object locates.
const (
	fNamespace = iota
	fName
	fResourceVersion
	fUID
	nFields
)

// An Object's allocation starts with a header: the JSON's length, 32 bits,
// whose top bit says which table follows. The table locates each metadata
// field by an offset from the start of the JSON and a length. The compact
// table, 16-bit offsets and 8-bit lengths, fits nearly every object; the
// wide one, 32 bits each, the rest (a field past the first 64 KiB, or over
// 255 bytes).
const (
	headerSize  = 4
	wideTable   = 1 << 31
	compactSize = 3 * nFields
	wideSize    = 8 * nFields
)

// tableSize is the size of the table that follows header h.
func tableSize(h uint32) int {
	if h&wideTable != 0 {
		return wideSize
	}
	return compactSize
}

var fieldNames = [nFields]string{"namespace", "name", "resourceVersion", "uid"}

// buildObject parses src, one JSON object, and returns it as an Object. It
// reads only the top level and metadata, in one pass over each, and copies
// src into one new allocation: any insertion (typeMeta), removal
// (managedFields) and decoded escapes are done while copying, behind the
// header and the span table.
func buildObject(src []byte, opt buildOptions) (*Object, error) {
	it := newObjectIter(src, 0)
	if it.err != nil {
		return nil, it.err
	}
	insertAt := it.i // just past the opening brace
	haveMeta, hasKind, hasAPIVersion := false, false, false
	wantType := len(opt.typeMeta) > 0
	var vals [nFields]valueRange
	cutStart, cutEnd := 0, 0
	var keys, metaKeys keySet
members:
	for {
		m, ok := it.nextKey()
		if !ok {
			break
		}
		keys.add(m.key)
		switch string(m.key) {
		case "metadata":
			if haveMeta {
				break // a repeat, which keys has seen
			}
			if it.i < len(src) && src[it.i] == '{' {
				// Read metadata once, in place of skipping it.
				var end int
				var err error
				if cutStart, cutEnd, end, err = scanMetadata(src, it.i, opt.dropManagedFields, &vals, &metaKeys); err != nil {
					return nil, fmt.Errorf("metadata: %w", err)
				}
				it.i, haveMeta = end, true
				if opt.unique && !wantType {
					break members // the rest cannot change the result
				}
				continue
			}
			if it.i < len(src) && src[it.i] != 'n' {
				return nil, errors.New("metadata is not an object")
			}
		case "kind":
			hasKind = true
		case "apiVersion":
			hasAPIVersion = true
		}
		_, end, err := opt.known.skip(src, it.i)
		if err != nil {
			return nil, fmt.Errorf("value of %q: %w", m.key, err)
		}
		it.i = end
	}
	if it.err != nil {
		return nil, it.err
	}
	if (keys.dup || metaKeys.dup) && !opt.unique {
		canon, err := withoutDuplicates(src)
		if err != nil {
			return nil, err
		}
		opt.unique, opt.known = true, knownSpans{}
		return buildObject(canon, opt)
	}

	var prefix []byte
	if wantType && !hasKind && !hasAPIVersion {
		prefix = opt.typeMeta
	}
	extra := 0
	var decoded [nFields]string
	for f, r := range vals {
		if r.end == 0 || src[r.start] == 'n' {
			continue
		}
		v := src[r.start:r.end]
		if v[0] != '"' {
			return nil, fmt.Errorf("metadata.%s is not a string", fieldNames[f])
		}
		if bytes.IndexByte(v, '\\') >= 0 {
			s, err := unquote(v)
			if err != nil {
				return nil, fmt.Errorf("metadata.%s: %w", fieldNames[f], err)
			}
			decoded[f] = s
			extra += len(s)
		}
	}

	comma := 0
	if len(prefix) > 0 && it.n > 0 {
		comma = 1
	}
	jsonLen := len(src) + len(prefix) + comma - (cutEnd - cutStart)
	// shift maps an offset in src to the same byte in the copy.
	shift := func(p int) int {
		switch {
		case p >= cutEnd && cutEnd > 0:
			return p + len(prefix) + comma - (cutEnd - cutStart)
		case p >= insertAt:
			return p + len(prefix) + comma
		}
		return p
	}
	var spans [nFields]struct{ off, size int }
	next := jsonLen // where the next decoded value goes
	wide := false
	for f, r := range vals {
		var off, size int
		switch {
		case decoded[f] != "":
			off, size = next, len(decoded[f])
			next += size
		case r.end-r.start > 2 && src[r.start] == '"':
			off, size = shift(r.start+1), r.end-r.start-2
		}
		spans[f].off, spans[f].size = off, size
		wide = wide || off >= 1<<16 || size >= 1<<8
	}
	h := uint32(0)
	if wide {
		h = wideTable
	}
	total := headerSize + tableSize(h) + jsonLen + extra
	if uint64(total) >= wideTable {
		return nil, errors.New("object larger than 2 GiB")
	}
	h |= uint32(jsonLen)

	// One allocation, which a Builder leaves uncleared since every byte is
	// written: the header, the table, the JSON, then any decoded escapes.
	var head [headerSize + wideSize]byte
	binary.LittleEndian.PutUint32(head[:], h)
	t := head[headerSize:]
	for f, sp := range spans {
		if wide {
			binary.LittleEndian.PutUint32(t[8*f:], uint32(sp.off))
			binary.LittleEndian.PutUint32(t[8*f+4:], uint32(sp.size))
		} else {
			binary.LittleEndian.PutUint16(t[3*f:], uint16(sp.off))
			t[3*f+2] = byte(sp.size)
		}
	}
	var out strings.Builder
	out.Grow(total)
	out.Write(head[:headerSize+tableSize(h)])
	out.Write(src[:insertAt])
	out.Write(prefix)
	if comma == 1 {
		out.WriteByte(',')
	}
	if cutEnd > 0 {
		out.Write(src[insertAt:cutStart])
		out.Write(src[cutEnd:])
	} else {
		out.Write(src[insertAt:])
	}
	for _, d := range decoded {
		out.WriteString(d)
	}
	return &Object{p: unsafe.StringData(out.String())}, nil
}

// valueRange is where a raw JSON value lies in its buffer.
type valueRange struct{ start, end int }

// scanMetadata reads the metadata object at src[start]: it records where the
// values of the fields an Object locates are, adds its keys to keys and, if
// drop is set, returns the byte range that removes managedFields with one
// adjacent comma. end is just past the metadata.
func scanMetadata(src []byte, start int, drop bool, vals *[nFields]valueRange, keys *keySet) (cutStart, cutEnd, end int, err error) {
	it := newObjectIter(src, start)
	prevEnd := it.i // end of the previous member, or just past '{'
	pending := false
	mfPrevEnd, mfIndex := 0, 0
	for {
		m, ok := it.next()
		if !ok {
			break
		}
		keys.add(m.key)
		if pending {
			// Remove up to the next key: the member, its comma and the
			// space before the next key.
			cutEnd, pending = m.keyStart, false
		}
		switch string(m.key) {
		case "namespace":
			vals[fNamespace] = valueRange{m.valueStart, m.valueEnd}
		case "name":
			vals[fName] = valueRange{m.valueStart, m.valueEnd}
		case "resourceVersion":
			vals[fResourceVersion] = valueRange{m.valueStart, m.valueEnd}
		case "uid":
			vals[fUID] = valueRange{m.valueStart, m.valueEnd}
		case "managedFields":
			if drop && cutEnd == 0 {
				cutStart, cutEnd, pending = m.keyStart, m.valueEnd, true
				mfPrevEnd, mfIndex = prevEnd, it.n-1
			}
		}
		prevEnd = m.valueEnd
	}
	if it.err != nil {
		return 0, 0, 0, it.err
	}
	if pending && mfIndex > 0 {
		// The last member: remove the comma before it instead.
		cutStart = mfPrevEnd
	}
	return cutStart, cutEnd, it.i, nil
}

// keySet finds a key given twice in one object. At the levels it is used
// on, the top and metadata, objects have few keys: a new one is compared
// with those before it only if one of them has the same length and last
// byte. Past keySet's room it assumes a repeat, which withoutDuplicates
// then settles exactly.
type keySet struct {
	seen uint64 // bit (length+last byte)%64 of each key
	keys [20]string
	n    int
	dup  bool
}

// add adds k, which must not change while ks is in use.
func (ks *keySet) add(k []byte) {
	if ks.n == len(ks.keys) {
		ks.dup = true
		return
	}
	h := len(k)
	if h > 0 {
		h += int(k[h-1])
	}
	bit := uint64(1) << (h & 63)
	key := unsafe.String(unsafe.SliceData(k), len(k))
	if ks.seen&bit != 0 {
		for _, p := range ks.keys[:ks.n] {
			if p == key {
				ks.dup = true
				return
			}
		}
	}
	ks.seen |= bit
	ks.keys[ks.n] = key
	ks.n++
}

// withoutDuplicates copies the object src keeping only the last of the
// members with the same key, at the top level and in metadata: the one the
// API server's decoder and encoding/json keep, and now the only one gjson
// (Get) can find.
func withoutDuplicates(src []byte) ([]byte, error) {
	return appendLastMembers(make([]byte, 0, len(src)), src, true)
}

func appendLastMembers(out, obj []byte, top bool) ([]byte, error) {
	var members []member
	it := newObjectIter(obj, 0)
	for {
		m, ok := it.next()
		if !ok {
			break
		}
		members = append(members, m)
	}
	if it.err != nil {
		return nil, it.err
	}
	last := make(map[string]int, len(members))
	for i, m := range members {
		last[string(m.key)] = i
	}
	out = append(out, '{')
	for i, m := range members {
		if last[string(m.key)] != i {
			continue
		}
		if len(out) > 0 && out[len(out)-1] != '{' {
			out = append(out, ',')
		}
		if top && string(m.key) == "metadata" && obj[m.valueStart] == '{' {
			out = append(out, obj[m.keyStart:m.valueStart]...)
			var err error
			if out, err = appendLastMembers(out, obj[m.valueStart:m.valueEnd], false); err != nil {
				return nil, fmt.Errorf("metadata: %w", err)
			}
			continue
		}
		out = append(out, obj[m.keyStart:m.valueEnd]...)
	}
	return append(out, '}'), nil
}
