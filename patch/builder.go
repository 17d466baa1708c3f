package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/listwatch/listwatch/raw"
)

// Precondition is what a body carries to make the server refuse it when
// the object is no longer the one read.
type Precondition int

const (
	// None: the write applies to whatever the object is now.
	None Precondition = iota
	// ResourceVersion: the write fails with 409 Conflict if the object
	// changed since it was read.
	ResourceVersion
	// UID: the write fails with 422 Invalid if the object was deleted and
	// created again under its name since it was read.
	UID
)

// ErrPath is wrapped by the error of Bytes when a path was malformed or
// went through a value that is not an object.
var ErrPath = errors.New("patch: bad path")

// Builder is a JSON object under construction. Its methods record the
// first error, which Bytes returns; they may be chained.
type Builder struct {
	root node
	err  error
}

// node is a JSON object whose members keep the order they were set in.
type node struct {
	names []string
	vals  []member
}

// member is either an object (obj) or an encoded JSON value (raw).
type member struct {
	obj *node
	raw []byte
}

// New returns an empty Builder: "{}".
func New() *Builder { return &Builder{} }

// Merge returns a Builder of a JSON merge patch of obj, carrying pre.
func Merge(obj *raw.Object, pre Precondition) *Builder {
	b := New()
	b.precondition(obj, pre)
	return b
}

// Apply returns a Builder of a server-side apply configuration of obj:
// its apiVersion, kind, name and namespace (if any), and pre.
func Apply(obj *raw.Object, pre Precondition) *Builder {
	b := New()
	b.Set("apiVersion", obj.APIVersion())
	b.Set("kind", obj.Kind())
	b.Set("metadata.name", obj.Name())
	if ns := obj.Namespace(); ns != "" {
		b.Set("metadata.namespace", ns)
	}
	b.precondition(obj, pre)
	return b
}

func (b *Builder) precondition(obj *raw.Object, pre Precondition) {
	switch pre {
	case ResourceVersion:
		b.Set("metadata.resourceVersion", obj.ResourceVersion())
	case UID:
		b.Set("metadata.uid", obj.UID())
	}
}

// Set sets the member at path to value, encoded as encoding/json would
// (strings, numbers, booleans, nil as null, maps, slices, structs),
// creating the objects on the way and replacing what was there.
func (b *Builder) Set(path string, value any) *Builder {
	raw, err := encode(value)
	if err != nil {
		b.fail(fmt.Errorf("patch: set %q: %w", path, err))
		return b
	}
	return b.set(path, raw)
}

// SetRaw sets the member at path to raw, which must be valid JSON.
func (b *Builder) SetRaw(path string, raw []byte) *Builder {
	if !json.Valid(raw) {
		b.fail(fmt.Errorf("patch: set %q: invalid JSON value", path))
		return b
	}
	return b.set(path, append([]byte(nil), raw...))
}

// set sets the member at path to raw, valid JSON the builder owns.
func (b *Builder) set(path string, raw []byte) *Builder {
	if b.err != nil {
		return b
	}
	names, err := split(path)
	if err != nil {
		b.fail(err)
		return b
	}
	n := &b.root
	for i, name := range names[:len(names)-1] {
		m, ok := n.get(name)
		switch {
		case !ok:
			m = member{obj: &node{}}
			n.put(name, m)
		case m.obj == nil:
			b.fail(fmt.Errorf("%w %q: %s is set to a value, not an object", ErrPath, path, Path(names[:i+1]...)))
			return b
		}
		n = m.obj
	}
	n.put(names[len(names)-1], member{raw: raw})
	return b
}

// Remove sets the member at path to null, which in a merge patch deletes
// it from the object.
func (b *Builder) Remove(path string) *Builder { return b.SetRaw(path, []byte("null")) }

// Bytes returns the JSON object built, or the first error met.
func (b *Builder) Bytes() ([]byte, error) {
	if b.err != nil {
		return nil, b.err
	}
	return b.root.appendTo(make([]byte, 0, 256)), nil
}

// String returns the JSON object built, or the error's text.
func (b *Builder) String() string {
	out, err := b.Bytes()
	if err != nil {
		return err.Error()
	}
	return string(out)
}

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (n *node) get(name string) (member, bool) {
	for i, k := range n.names {
		if k == name {
			return n.vals[i], true
		}
	}
	return member{}, false
}

func (n *node) put(name string, m member) {
	for i, k := range n.names {
		if k == name {
			n.vals[i] = m
			return
		}
	}
	n.names = append(n.names, name)
	n.vals = append(n.vals, m)
}

func (n *node) appendTo(dst []byte) []byte {
	dst = append(dst, '{')
	for i, name := range n.names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, name)
		dst = append(dst, ':')
		if m := n.vals[i]; m.obj != nil {
			dst = m.obj.appendTo(dst)
		} else {
			dst = append(dst, m.raw...)
		}
	}
	return append(dst, '}')
}

// split cuts a path at its unescaped dots and unescapes the names.
func split(path string) ([]string, error) {
	if strings.IndexByte(path, '\\') < 0 {
		names := strings.Split(path, ".")
		if slices.Contains(names, "") {
			return nil, fmt.Errorf("%w %q: empty member name", ErrPath, path)
		}
		return names, nil
	}
	var names []string
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '\\':
			if i+1 == len(path) {
				return nil, fmt.Errorf("%w %q: ends in a lone backslash", ErrPath, path)
			}
			i++
			cur.WriteByte(path[i])
		case c == '.':
			names = append(names, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	names = append(names, cur.String())
	for _, n := range names {
		if n == "" {
			return nil, fmt.Errorf("%w %q: empty member name", ErrPath, path)
		}
	}
	return names, nil
}

// Path joins member names into a path, escaping their dots and
// backslashes: Path("metadata", "labels", "app.kubernetes.io/name").
func Path(names ...string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte('.')
		}
		for j := 0; j < len(n); j++ {
			if n[j] == '.' || n[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(n[j])
		}
	}
	return b.String()
}
