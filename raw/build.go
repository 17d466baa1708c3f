package raw

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
	top, err := readTop(src, opt)
	if err != nil {
		return nil, err
	}
	if top.dup && !opt.unique {
		canon, err := withoutDuplicates(src)
		if err != nil {
			return nil, err
		}
		opt.unique, opt.known = true, knownSpans{}
		return buildObject(canon, opt)
	}
	var l layout
	if len(opt.typeMeta) > 0 && !top.hasType {
		l.prefix = opt.typeMeta
		if top.members > 0 {
			l.comma = 1
		}
	}
	if err := l.place(src, &top); err != nil {
		return nil, err
	}
	return l.write(src, &top), nil
}

// topLevel is what one pass over an object's top level and metadata finds.
type topLevel struct {
	insertAt         int // just past the opening brace
	members          int // top-level members
	hasType          bool
	dup              bool // a key repeated at the top or in metadata
	vals             [nFields]valueRange
	cutStart, cutEnd int // managedFields, to leave out (cutEnd 0: nothing)
}

// readTop reads the top level of src and its metadata, from the scanner's
// notes if it took them.
func readTop(src []byte, opt buildOptions) (topLevel, error) {
	if t, ok := opt.known.topLevel(src, opt.dropManagedFields); ok {
		return t, nil
	}
	it := newObjectIter(src, 0)
	if it.err != nil {
		return topLevel{}, it.err
	}
	t := topLevel{insertAt: it.i}
	haveMeta := false
	wantType := len(opt.typeMeta) > 0
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
				if t.cutStart, t.cutEnd, end, err = scanMetadata(src, it.i, opt, &t.vals, &metaKeys); err != nil {
					return topLevel{}, fmt.Errorf("metadata: %w", err)
				}
				it.i, haveMeta = end, true
				if opt.unique && !wantType {
					break members // the rest cannot change the result
				}
				continue
			}
			if it.i < len(src) && src[it.i] != 'n' {
				return topLevel{}, errors.New("metadata is not an object")
			}
		case "kind", "apiVersion":
			t.hasType = true
		}
		_, end, err := opt.known.skip(src, it.i)
		if err != nil {
			return topLevel{}, fmt.Errorf("value of %q: %w", m.key, err)
		}
		it.i = end
	}
	if it.err != nil {
		return topLevel{}, it.err
	}
	t.members, t.dup = it.n, keys.dup || metaKeys.dup
	return t, nil
}

// layout is where everything goes in an Object's allocation.
type layout struct {
	prefix  []byte // inserted just past the opening brace
	comma   int    // 1 if a comma follows prefix
	jsonLen int
	decoded [nFields]string // metadata values the JSON holds escaped
	extra   int             // their total length, stored after the JSON
	spans   [nFields]struct{ off, size int }
	wide    bool // the spans need the wide table
}

// place decodes escaped metadata values and locates every field in the
// copy of src.
func (l *layout) place(src []byte, t *topLevel) error {
	for f, r := range t.vals {
		if r.end == 0 || src[r.start] == 'n' {
			continue
		}
		v := src[r.start:r.end]
		if v[0] != '"' {
			return fmt.Errorf("metadata.%s is not a string", fieldNames[f])
		}
		if bytes.IndexByte(v, '\\') >= 0 {
			s, err := unquote(v)
			if err != nil {
				return fmt.Errorf("metadata.%s: %w", fieldNames[f], err)
			}
			l.decoded[f] = s
			l.extra += len(s)
		}
	}
	inserted, cut := len(l.prefix)+l.comma, t.cutEnd-t.cutStart
	l.jsonLen = len(src) + inserted - cut
	next := l.jsonLen // where the next decoded value goes
	for f, r := range t.vals {
		var off, size int
		switch {
		case l.decoded[f] != "":
			off, size = next, len(l.decoded[f])
			next += size
		case r.end-r.start > 2 && src[r.start] == '"':
			// The same byte in the copy: shifted by the insertion
			// and, past managedFields, by the cut.
			p := r.start + 1 // in src
			off, size = p, r.end-r.start-2
			if p >= t.insertAt {
				off += inserted
			}
			if t.cutEnd > 0 && p >= t.cutEnd {
				off -= cut
			}
		}
		l.spans[f].off, l.spans[f].size = off, size
		l.wide = l.wide || off >= 1<<16 || size >= 1<<8
	}
	if uint64(l.total()) >= wideTable {
		return errors.New("object larger than 2 GiB")
	}
	return nil
}

// total is the size of the allocation.
func (l *layout) total() int {
	h := uint32(0)
	if l.wide {
		h = wideTable
	}
	return headerSize + tableSize(h) + l.jsonLen + l.extra
}

// write makes the one allocation, which a Builder leaves uncleared since
// every byte is written: the header, the table, the JSON, then any decoded
// escapes.
func (l *layout) write(src []byte, t *topLevel) *Object {
	h := uint32(l.jsonLen)
	if l.wide {
		h |= wideTable
	}
	var head [headerSize + wideSize]byte
	binary.LittleEndian.PutUint32(head[:], h)
	tab := head[headerSize:]
	for f, sp := range l.spans {
		if l.wide {
			binary.LittleEndian.PutUint32(tab[8*f:], uint32(sp.off))
			binary.LittleEndian.PutUint32(tab[8*f+4:], uint32(sp.size))
		} else {
			binary.LittleEndian.PutUint16(tab[3*f:], uint16(sp.off))
			tab[3*f+2] = byte(sp.size)
		}
	}
	var out strings.Builder
	out.Grow(l.total())
	out.Write(head[:headerSize+tableSize(h)])
	out.Write(src[:t.insertAt])
	out.Write(l.prefix)
	if l.comma == 1 {
		out.WriteByte(',')
	}
	if t.cutEnd > 0 {
		out.Write(src[t.insertAt:t.cutStart])
		out.Write(src[t.cutEnd:])
	} else {
		out.Write(src[t.insertAt:])
	}
	for _, d := range l.decoded {
		out.WriteString(d)
	}
	return &Object{p: unsafe.StringData(out.String())}
}

// valueRange is where a raw JSON value lies in its buffer.
type valueRange struct{ start, end int }

// scanMetadata reads the metadata object at src[start]: it records where the
// values of the fields an Object locates are, adds its keys to keys and, if
// opt drops managedFields, returns the byte range that removes them with
// one adjacent comma. end is just past the metadata.
func scanMetadata(src []byte, start int, opt buildOptions, vals *[nFields]valueRange, keys *keySet) (cutStart, cutEnd, end int, err error) {
	it := newObjectIter(src, start)
	prevEnd := it.i // end of the previous member, or just past '{'
	pending, drop := false, opt.dropManagedFields
	mfPrevEnd, mfIndex := 0, 0
	for {
		m, ok := it.nextKey()
		if !ok {
			break
		}
		if _, m.valueEnd, err = opt.known.skip(src, it.i); err != nil {
			return 0, 0, 0, fmt.Errorf("value of %q: %w", m.key, err)
		}
		it.i = m.valueEnd
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
