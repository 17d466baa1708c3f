package httpwatch

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// buildOptions say how buildObject turns a JSON object into an Object.
type buildOptions struct {
	// copy makes the Object own a fresh copy (src is a reused read buffer).
	copy bool
	// dropManagedFields leaves metadata.managedFields out of the copy.
	dropManagedFields bool
	// typeMeta, e.g. `"kind":"Pod","apiVersion":"v1"`, is inserted first in
	// an object that has neither kind nor apiVersion.
	typeMeta []byte
}

// Indices of the metadata fields an Object locates.
const (
	fNamespace = iota
	fName
	fResourceVersion
	fUID
	nFields
)

var fieldNames = [nFields]string{"namespace", "name", "resourceVersion", "uid"}

// buildObject parses src, one JSON object, and returns it as an Object. It
// reads only the top level and metadata, in one pass over each, and makes at
// most one allocation for the JSON: any insertion (typeMeta), removal
// (managedFields) and decoded escapes are done while copying.
func buildObject(src []byte, opt buildOptions) (*Object, error) {
	it := newObjectIter(src, 0)
	if it.err != nil {
		return nil, it.err
	}
	insertAt := it.i // just past the opening brace
	var meta member
	haveMeta, hasKind, hasAPIVersion := false, false, false
	wantType := len(opt.typeMeta) > 0
	for {
		m, ok := it.next()
		if !ok {
			break
		}
		switch string(m.key) {
		case "metadata":
			if !haveMeta {
				meta, haveMeta = m, true
			}
		case "kind":
			hasKind = true
		case "apiVersion":
			hasAPIVersion = true
		}
		if haveMeta && !wantType {
			break // the rest of the object cannot change the result
		}
	}
	if it.err != nil {
		return nil, it.err
	}

	var vals [nFields]valueRange
	cutStart, cutEnd := 0, 0
	if haveMeta && src[meta.valueStart] != 'n' {
		var err error
		if cutStart, cutEnd, err = scanMetadata(src, meta.valueStart, opt.dropManagedFields, &vals); err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
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
	if jsonLen+extra > math.MaxUint32 {
		return nil, errors.New("object larger than 4 GiB")
	}
	// shift maps an offset in src to the same byte in out.
	shift := func(p int) int {
		switch {
		case p >= cutEnd && cutEnd > 0:
			return p + len(prefix) + comma - (cutEnd - cutStart)
		case p >= insertAt:
			return p + len(prefix) + comma
		}
		return p
	}
	out := src
	if opt.copy || len(prefix) > 0 || cutEnd > 0 || extra > 0 {
		out = make([]byte, jsonLen+extra)
		n := copy(out, src[:insertAt])
		n += copy(out[n:], prefix)
		if comma == 1 {
			out[n] = ','
			n++
		}
		if cutEnd > 0 {
			n += copy(out[n:], src[insertAt:cutStart])
			copy(out[n:], src[cutEnd:])
		} else {
			copy(out[n:], src[insertAt:])
		}
	}
	o := &Object{raw: unsafe.String(unsafe.SliceData(out), jsonLen)}
	spans := [nFields]*span{&o.namespace, &o.name, &o.rv, &o.uid}
	next := jsonLen
	for f, r := range vals {
		switch {
		case decoded[f] != "":
			copy(out[next:], decoded[f])
			*spans[f] = span{uint32(next), uint32(len(decoded[f]))}
			next += len(decoded[f])
		case r.end-r.start > 2 && src[r.start] == '"':
			*spans[f] = span{uint32(shift(r.start + 1)), uint32(r.end - r.start - 2)}
		}
	}
	return o, nil
}

// valueRange is where a raw JSON value lies in its buffer.
type valueRange struct{ start, end int }

// scanMetadata reads the metadata object at src[start]: it records where the
// values of the fields an Object locates are and, if drop is set, returns the
// byte range that removes managedFields with one adjacent comma.
func scanMetadata(src []byte, start int, drop bool, vals *[nFields]valueRange) (cutStart, cutEnd int, err error) {
	it := newObjectIter(src, start)
	prevEnd := it.i // end of the previous member, or just past '{'
	pending := false
	mfPrevEnd, mfIndex := 0, 0
	for {
		m, ok := it.next()
		if !ok {
			break
		}
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
		return 0, 0, it.err
	}
	if pending && mfIndex > 0 {
		// The last member: remove the comma before it instead.
		cutStart = mfPrevEnd
	}
	return cutStart, cutEnd, nil
}
