package raw

import (
	"errors"
	"fmt"
	"strings"
)

// ErrProjectionPath is wrapped by NewProjection's error for a path it cannot
// keep.
var ErrProjectionPath = errors.New("unsupported projection path")

// Projection names the fields of an object worth caching: the rest are left
// out while the object is copied out of the read buffer, so they are never
// copied nor kept. Set one as Decoder.Projection (httpwatch's
// ResourceClient.Projection, listwatch.Factory.Projection); it applies
// before the Transform and composes with selectors and MetadataOnly. An Object cut by a
// projection reads as if the server had sent only the kept fields: Get
// finds nothing elsewhere, Decode leaves the other fields zero, Labels is
// nil unless metadata.labels is kept. Make one with NewProjection; it is
// immutable and may be shared.
//
// A path is a gjson path of object member names joined by dots, such as
// "spec.nodeName", "metadata.labels" or, with gjson's backslash escape,
// "metadata.labels.app\.kubernetes\.io/name". It keeps the whole value it
// names, whatever its type, and the objects on the way to it, each with
// only the members on some kept path (an object with none left is kept
// empty, "spec":{}). A value on the way that is not an object (an array, a
// string, null) is left out: paths do not reach into arrays, so keep an
// array whole ("metadata.ownerReferences"). Wildcards, array indexes and
// queries ('#'), modifiers ('@'), pipes, multipaths and all-digit names
// are rejected, as are more than 64 names under one object.
//
// Always kept: kind, apiVersion and the identity in metadata (namespace,
// name, uid, resourceVersion), so that keys, the accessors and the
// informer's relist comparison (same resourceVersion, same object) work on
// projected objects. metadata.managedFields stays dropped when the
// Decoder drops it, even under a kept "metadata". A key repeated at the
// top or in metadata counts once, the last time, as in any Object; deeper,
// a cut object keeps the first (the one Get reads), which a real server
// never repeats.
//
// Cost: an Object holds the kept JSON and 16 to 40 bytes more (see Object),
// so the heap a cache needs per object is the kept JSON plus the cache's
// own entry (about 150 bytes in an informer). Cutting scans the members of
// the objects on the way to kept paths up to the last one kept (for
// "status.phase", the start of status) and copies the kept bytes twice,
// through a scratch buffer reused from object to object: about what the
// whole copy it replaces costs, and far less garbage.
type Projection struct {
	paths []string
	root  *keepNode
}

// keepNode says what to keep of one value: all of it, or the members
// named in kids.
type keepNode struct {
	whole bool
	kids  []keepKid
}

type keepKid struct {
	name string
	node *keepNode
}

// maxKids bounds the names kept under one object, so that a bit mask can
// say which were found.
const maxKids = 64

var keepAll = &keepNode{whole: true}

// identity are the paths every projection keeps.
var identity = []string{
	"kind", "apiVersion",
	"metadata.namespace", "metadata.name", "metadata.uid", "metadata.resourceVersion",
}

// NewProjection returns the projection that keeps paths, besides what every
// projection keeps (see Projection). It fails with an error wrapping
// ErrProjectionPath for a path it cannot keep, naming the path and why.
func NewProjection(paths ...string) (*Projection, error) {
	p := &Projection{root: &keepNode{}}
	for _, path := range append(identity[:len(identity):len(identity)], paths...) {
		names, err := splitPath(path)
		if err != nil {
			return nil, fmt.Errorf("projection path %q: %w", path, err)
		}
		if err := p.root.add(names); err != nil {
			return nil, fmt.Errorf("projection path %q: %w", path, err)
		}
	}
	p.paths = append(p.paths, paths...)
	return p, nil
}

// Paths returns the paths the projection was made with.
func (p *Projection) Paths() []string { return append([]string(nil), p.paths...) }

// splitPath splits a gjson path into member names, undoing escapes.
func splitPath(path string) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty", ErrProjectionPath)
	}
	var names []string
	var name strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '\\':
			if i++; i == len(path) {
				return nil, fmt.Errorf("%w: ends in a backslash", ErrProjectionPath)
			}
			name.WriteByte(path[i])
			continue
		case c == '.':
			if name.Len() == 0 {
				return nil, fmt.Errorf("%w: empty member name", ErrProjectionPath)
			}
			names = append(names, name.String())
			name.Reset()
			continue
		case strings.IndexByte(pathSyntax, c) >= 0:
			return nil, fmt.Errorf("%w: %q is gjson syntax (wildcard, array query, modifier, pipe or multipath), not supported; escape it with a backslash if it is part of a name", ErrProjectionPath, c)
		}
		name.WriteByte(c)
	}
	if name.Len() == 0 {
		return nil, fmt.Errorf("%w: empty member name", ErrProjectionPath)
	}
	names = append(names, name.String())
	for _, n := range names {
		if strings.Trim(n, "0123456789") == "" {
			return nil, fmt.Errorf("%w: %q would be an array index; paths do not reach into arrays, keep the whole array", ErrProjectionPath, n)
		}
	}
	return names, nil
}

// pathSyntax are the bytes that mean more than a name in a gjson path.
const pathSyntax = "*?#@|!,[]{}()=<>%~"

// add adds the path names to the tree under n.
func (n *keepNode) add(names []string) error {
	if n.whole {
		return nil
	}
	if len(names) == 0 {
		n.whole, n.kids = true, nil
		return nil
	}
	for _, k := range n.kids {
		if k.name == names[0] {
			return k.node.add(names[1:])
		}
	}
	if len(n.kids) == maxKids {
		return fmt.Errorf("%w: more than %d names kept in one object", ErrProjectionPath, maxKids)
	}
	kid := &keepNode{}
	n.kids = append(n.kids, keepKid{names[0], kid})
	return kid.add(names[1:])
}

// kid returns the node for the member name and its index in n.kids (-1 for
// none): a nil node leaves the member out.
func (n *keepNode) kid(name []byte) (*keepNode, int) {
	if n.whole {
		return keepAll, -1
	}
	for i, k := range n.kids {
		if k.name == string(name) {
			return k.node, i
		}
	}
	return nil, -1
}

// errRepeated says the object repeats a key at the top or in metadata.
var errRepeated = errors.New("repeated key")

// appendTo appends the object src, cut to what p keeps, to dst, without
// managedFields if drop is set. known are members of src already located.
// Of keys repeated at the top level or in a metadata it cuts, only the last
// is read, as buildObject does; a whole metadata is copied as it is, for
// buildObject to settle.
func (p *Projection) appendTo(dst, src []byte, known knownSpans, drop bool) ([]byte, error) {
	out, err := p.appendTop(dst, src, &known, drop, true)
	if errors.Is(err, errRepeated) {
		canon, err := withoutDuplicates(src)
		if err != nil {
			return dst, err
		}
		return p.appendTop(dst, canon, &knownSpans{}, drop, false)
	}
	return out, err
}

// appendTop is appendTo; a repeated key is errRepeated if checkRepeats is
// set.
func (p *Projection) appendTop(dst, src []byte, known *knownSpans, drop, checkRepeats bool) ([]byte, error) {
	it := newObjectIter(src, 0)
	dst = append(dst, '{')
	var keys keySet
	for {
		m, ok := it.nextKey()
		if !ok {
			break
		}
		if keys.add(m.key); keys.dup && checkRepeats {
			return dst, errRepeated
		}
		node, _ := p.root.kid(m.key)
		var err error
		switch {
		case node == nil:
			_, it.i, err = known.skip(src, it.i)
		case string(m.key) == "metadata" && it.i < len(src) && src[it.i] != '{':
			// Copied for buildObject to accept (null) or reject.
			dst, it.i, err = appendValue(dst, src, m, keepAll, known)
		case string(m.key) == "metadata" && (drop || !node.whole):
			dst, it.i, err = appendMetadata(appendKey(dst, src, m), src, it.i, node, drop, checkRepeats)
		default:
			dst, it.i, err = appendValue(dst, src, m, node, known)
		}
		if err != nil {
			return dst, fmt.Errorf("value of %q: %w", m.key, err)
		}
	}
	if it.err != nil {
		return dst, it.err
	}
	return append(dst, '}'), nil
}

// appendKey appends the key of m, and a comma before it unless it is the
// first member in dst's object.
func appendKey(dst, src []byte, m member) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	return append(dst, src[m.keyStart:m.valueStart]...)
}

// appendValue appends the member m, whose value starts at m.valueStart, as
// node keeps it, and returns where the value ends. A member whose value
// node would cut but is not an object is left out.
func appendValue(dst, src []byte, m member, node *keepNode, known *knownSpans) ([]byte, int, error) {
	if node.whole {
		_, end, err := known.skip(src, m.valueStart)
		if err == nil {
			dst = append(appendKey(dst, src, m), src[m.valueStart:end]...)
		}
		return dst, end, err
	}
	if m.valueStart == len(src) || src[m.valueStart] != '{' {
		_, end, err := known.skip(src, m.valueStart)
		return dst, end, err
	}
	return appendMembers(appendKey(dst, src, m), src, m.valueStart, node, known.end(m.valueStart))
}

// appendMetadata appends the metadata object at src[start] with the
// members node keeps, less managedFields if drop is set, and returns where
// the object ends. If checkRepeats is set, a repeated key is errRepeated.
func appendMetadata(dst, src []byte, start int, node *keepNode, drop, checkRepeats bool) ([]byte, int, error) {
	it := newObjectIter(src, start)
	dst = append(dst, '{')
	var keys keySet
	for {
		m, ok := it.nextKey()
		if !ok {
			break
		}
		if keys.add(m.key); keys.dup && checkRepeats {
			return dst, 0, errRepeated
		}
		kid, _ := node.kid(m.key)
		var err error
		if kid == nil || drop && string(m.key) == "managedFields" {
			_, it.i, err = skipValue(src, it.i)
		} else {
			dst, it.i, err = appendValue(dst, src, m, kid, &knownSpans{})
		}
		if err != nil {
			return dst, 0, fmt.Errorf("value of %q: %w", m.key, err)
		}
	}
	if it.err != nil {
		return dst, 0, it.err
	}
	return append(dst, '}'), it.i, nil
}

// appendMembers appends the object at src[start] with the first member of
// each name node keeps, and returns where the object ends: at once when
// every one was found, then from knownEnd if it is not 0.
func appendMembers(dst, src []byte, start int, node *keepNode, knownEnd int) ([]byte, int, error) {
	it := newObjectIter(src, start)
	dst = append(dst, '{')
	all := uint64(1)<<len(node.kids) - 1 // 1<<64 is 0: all ones
	var found uint64
	for found != all {
		m, ok := it.nextKey()
		if !ok {
			if it.err != nil {
				return dst, 0, it.err
			}
			return append(dst, '}'), it.i, nil
		}
		kid, k := node.kid(m.key)
		var err error
		if kid == nil || found&(1<<k) != 0 {
			_, it.i, err = skipValue(src, it.i)
		} else {
			found |= 1 << k
			dst, it.i, err = appendValue(dst, src, m, kid, &knownSpans{})
		}
		if err != nil {
			return dst, 0, fmt.Errorf("value of %q: %w", m.key, err)
		}
	}
	// The rest holds nothing to keep.
	end := knownEnd
	if end == 0 {
		var err error
		if end, err = skipRest(src, it.i); err != nil {
			return dst, 0, err
		}
	}
	return append(dst, '}'), end, nil
}

// skipRest returns the index just past the object whose members continue
// at b[i], between two of them or before its closing brace.
func skipRest(b []byte, i int) (int, error) {
	s := containerScanner{depth: 1, closer: '}'}
	n, done := s.feed(b[i:])
	switch {
	case !done:
		return len(b), errTruncated
	case s.mismatch:
		return i + n, s.mismatchError(int64(i + n - 1))
	}
	return i + n, nil
}
