package raw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// BinaryVersion is the version of the form AppendBinary writes and
// UnmarshalBinary reads: the first byte of every encoding. It changes
// whenever an Object's layout in memory does.
const BinaryVersion = 1

// ErrBinaryVersion is returned by UnmarshalBinary for an encoding of
// another BinaryVersion.
var ErrBinaryVersion = errors.New("raw: binary form of another version")

// AppendBinary appends o as it is held in memory — its JSON and where its
// metadata fields lie — to b (encoding.BinaryAppender). UnmarshalBinary
// turns it back into an Object without reading the JSON again, which is
// what makes a saved cache quick to load (package snapshot).
func (o *Object) AppendBinary(b []byte) ([]byte, error) {
	if o.p == nil {
		return nil, errors.New("raw: AppendBinary of the zero Object")
	}
	b = append(b, BinaryVersion)
	return append(b, unsafe.Slice(o.p, o.size())...), nil
}

// MarshalBinary is AppendBinary(nil) (encoding.BinaryMarshaler).
func (o *Object) MarshalBinary() ([]byte, error) { return o.AppendBinary(nil) }

// size is the length of o's allocation: header, table, JSON and the
// decoded escapes, which end with the last field placed after the JSON.
func (o *Object) size() int {
	h := o.header()
	n := int(h &^ wideTable)
	end := n
	for f := range nFields {
		off, size := o.span(h, f)
		if size > 0 && int(off) >= n {
			end = max(end, int(off+size))
		}
	}
	return headerSize + tableSize(h) + end
}

// UnmarshalBinary sets the zero Object o to a copy of data, an encoding
// from AppendBinary (encoding.BinaryUnmarshaler). It checks the layout —
// every field lies within the data, the JSON is delimited as an object —
// so that no input makes an accessor read out of bounds, but it does not
// validate the JSON again: give it only what AppendBinary wrote, kept from
// change by a checksum, as package snapshot does. Use NewObject for JSON
// of unknown origin.
func (o *Object) UnmarshalBinary(data []byte) error {
	if o.p != nil {
		return errors.New("raw: UnmarshalBinary into a used Object; Objects are immutable")
	}
	if len(data) == 0 {
		return errors.New("raw: empty binary form")
	}
	if data[0] != BinaryVersion {
		return fmt.Errorf("%w: %d, want %d", ErrBinaryVersion, data[0], BinaryVersion)
	}
	data = data[1:]
	if len(data) < headerSize {
		return errors.New("raw: binary form cut short")
	}
	h := binary.LittleEndian.Uint32(data)
	body := len(data) - headerSize - tableSize(h) // JSON and decoded escapes
	n := int(h &^ wideTable)
	if body < n || n < 2 {
		return fmt.Errorf("raw: binary form of %d bytes holds no JSON of %d", len(data), n)
	}
	tab := Object{p: unsafe.SliceData(data)}
	for f := range nFields {
		if off, size := tab.span(h, f); size > 0 && int64(off)+int64(size) > int64(body) {
			return fmt.Errorf("raw: binary form locates metadata.%s out of bounds", fieldNames[f])
		}
	}
	js := data[headerSize+tableSize(h):]
	if js[0] != '{' || js[n-1] != '}' {
		return errors.New("raw: binary form holds no JSON object")
	}
	var out strings.Builder
	out.Grow(len(data)) // uncleared: every byte is written
	out.Write(data)
	o.p = unsafe.StringData(out.String())
	return nil
}
