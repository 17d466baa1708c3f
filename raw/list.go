package httpwatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"
)

// Transform rewrites an object before it is returned (and so before anything
// caches it). It must not modify its argument, which is immutable; it returns
// the object to keep, which may be the same one. A nil object with a nil
// error is an error: a transform cannot drop objects, since dropping a
// DELETED event would leave a cache holding an object forever.
type Transform func(*Object) (*Object, error)

// scanOptions say how a list body or watch stream becomes objects.
type scanOptions struct {
	maxFrame  int
	sizeHint  int         // expected items in a page (the limit asked for)
	drop      bool        // drop managedFields while copying
	project   *Projection // may be nil
	scratch   []byte      // the last projected object, reused
	transform Transform   // may be nil
}

// object builds an Object from (a copy of) src, cut by the projection, and
// applies the transform; known are members of src already located.
func (so *scanOptions) object(src []byte, typeMeta []byte, known knownSpans) (*Object, error) {
	var o *Object
	var err error
	if so.project == nil {
		o, err = buildObject(src, buildOptions{dropManagedFields: so.drop, typeMeta: typeMeta, known: known})
	} else if so.scratch, err = so.project.appendTo(so.scratch[:0], src, known, so.drop); err == nil {
		o, err = buildObject(so.scratch, buildOptions{typeMeta: typeMeta})
	}
	if err != nil {
		return nil, err
	}
	if so.transform == nil {
		return o, nil
	}
	t, err := so.transform(o)
	if err != nil {
		return nil, fmt.Errorf("transform %s/%s: %w", o.Namespace(), o.Name(), err)
	}
	if t == nil {
		return nil, fmt.Errorf("transform %s/%s: returned no object", o.Namespace(), o.Name())
	}
	return t, nil
}

// scanList reads a list response body item by item. Each item is copied out
// of a pooled read buffer as soon as it is complete, so memory is the items
// plus one buffer the size of the largest item, never the whole body. The
// body is read to its end, so the connection can be reused.
func scanList(body io.Reader, so *scanOptions) (*Page, error) {
	rd := newReader(body, so.maxFrame, true)
	defer rd.release()
	// Not endOnly: the scanner checks bracket kinds on an item's top levels,
	// at no measurable cost, and notes where its members are.
	rd.sc.spans = &spanNotes{level: 2}
	p, err := scanListFrom(rd, so)
	if err != nil {
		if rd.fromSource(err) {
			return nil, fmt.Errorf("read list body at byte %d: %w", rd.offset(), err)
		}
		return nil, &DecodeError{Offset: rd.offset(), Err: err}
	}
	return p, nil
}

func scanListFrom(rd *reader, so *scanOptions) (*Page, error) {
	page := &Page{}
	if err := rd.expect('{'); err != nil {
		return nil, err
	}
	var kind, apiVersion string
	for n := 0; ; n++ {
		c, err := rd.peek()
		if err != nil {
			return nil, unexpectedEnd(err)
		}
		if c == '}' {
			rd.r++
			break
		}
		if n > 0 {
			if err := rd.expect(','); err != nil {
				return nil, err
			}
		}
		if c, err = rd.peek(); err != nil {
			return nil, unexpectedEnd(err)
		}
		if c != '"' {
			return nil, fmt.Errorf("expected an object key, found %q", c)
		}
		lit, err := rd.str()
		if err != nil {
			return nil, err
		}
		key, err := keyString(lit)
		if err != nil {
			return nil, err
		}
		if err := rd.expect(':'); err != nil {
			return nil, err
		}
		switch key {
		case "items":
			if err := scanItems(rd, so, page, typeMetaFor(kind, apiVersion)); err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
			continue
		case "kind", "apiVersion", "metadata":
		default:
			if _, err := rd.value(); err != nil {
				return nil, unexpectedEnd(err)
			}
			continue
		}
		v, err := rd.value()
		if err != nil {
			return nil, unexpectedEnd(err)
		}
		switch key {
		case "kind":
			kind = gjson.ParseBytes(v).String()
		case "apiVersion":
			apiVersion = gjson.ParseBytes(v).String()
		case "metadata":
			if err := listMeta(v, page); err != nil {
				return nil, err
			}
		}
	}
	// Only whitespace may follow the list.
	if c, err := rd.peek(); err == nil {
		return nil, fmt.Errorf("unexpected %q after the list", c)
	} else if err != io.EOF {
		return nil, err
	}
	return page, nil
}

// keyString decodes an object key (with its quotes).
func keyString(lit []byte) (string, error) {
	for _, c := range lit {
		if c == '\\' {
			return unquote(lit)
		}
	}
	return string(lit[1 : len(lit)-1]), nil
}

// typeMetaFor is what the list scanner inserts into items that lack kind and
// apiVersion: the list's kind without "List", and its apiVersion. A generic
// "List" says nothing about its items' kind, so nothing is inserted then, nor
// when the list named its kind only after its items.
func typeMetaFor(listKind, apiVersion string) []byte {
	kind, ok := strings.CutSuffix(listKind, "List")
	if !ok || kind == "" || apiVersion == "" {
		return nil
	}
	k, _ := json.Marshal(kind)
	v, _ := json.Marshal(apiVersion)
	return []byte(`"kind":` + string(k) + `,"apiVersion":` + string(v))
}

func scanItems(rd *reader, so *scanOptions, page *Page, typeMeta []byte) error {
	c, err := rd.peek()
	if err != nil {
		return unexpectedEnd(err)
	}
	if c == 'n' {
		_, err := rd.value() // null: no items
		return err
	}
	if err := rd.expect('['); err != nil {
		return err
	}
	if page.Items == nil && so.sizeHint > 0 {
		page.Items = make([]*Object, 0, so.sizeHint)
	}
	for n := 0; ; n++ {
		c, err := rd.peek()
		if err != nil {
			return unexpectedEnd(err)
		}
		if c == ']' {
			rd.r++
			return nil
		}
		if n > 0 {
			if err := rd.expect(','); err != nil {
				return err
			}
			if c, err = rd.peek(); err != nil {
				return unexpectedEnd(err)
			}
		}
		if c != '{' {
			return fmt.Errorf("item %d: expected a JSON object, found %q", n, c)
		}
		v, err := rd.container()
		if err != nil {
			return fmt.Errorf("item %d: %w", n, err)
		}
		o, err := so.object(v, typeMeta, rd.sc.spans.noted())
		if err != nil {
			return fmt.Errorf("item %d: %w", n, err)
		}
		page.Items = append(page.Items, o)
	}
}

// listMeta copies the list's metadata out of the read buffer.
func listMeta(v []byte, page *Page) error {
	if len(v) == 0 || v[0] != '{' {
		if string(v) == "null" {
			return nil
		}
		return errors.New("list metadata is not an object")
	}
	m := gjson.GetManyBytes(v, "resourceVersion", "continue", "remainingItemCount")
	page.ResourceVersion = m[0].String()
	page.Continue = m[1].String()
	if m[2].Exists() {
		n := m[2].Int()
		page.RemainingItemCount = &n
	}
	return nil
}
