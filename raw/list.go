package raw

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"
)

// List is a list response: its items and its metadata.
type List struct {
	Items              []*Object
	ResourceVersion    string
	Continue           string
	RemainingItemCount *int64
}

// DecodeList reads a list response body item by item. Each item is copied
// out of a pooled read buffer as soon as it is complete, so memory is the
// items plus one buffer the size of the largest item, never the whole body.
// The body is read to its end, so the connection can be reused. sizeHint is
// how many items to make room for at first (the page size asked for).
// Malformed input is an *InputError.
func (d *Decoder) DecodeList(body io.Reader, sizeHint int) (*List, error) {
	rd := newReader(body, d.MaxFrameSize, true)
	defer rd.release()
	// Not endOnly: the scanner checks bracket kinds on an item's top levels,
	// at no measurable cost, and notes where its members are.
	rd.sc.spans = &spanNotes{level: 2}
	p, err := d.scanList(rd, sizeHint)
	if err != nil {
		if rd.fromSource(err) {
			return nil, fmt.Errorf("read list body at byte %d: %w", rd.offset(), err)
		}
		return nil, &InputError{Offset: rd.offset(), Err: err}
	}
	return p, nil
}

func (d *Decoder) scanList(rd *reader, sizeHint int) (*List, error) {
	page := &List{}
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
			if err := d.scanItems(rd, page, sizeHint, typeMetaFor(kind, apiVersion)); err != nil {
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

func (d *Decoder) scanItems(rd *reader, page *List, sizeHint int, typeMeta []byte) error {
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
	if page.Items == nil && sizeHint > 0 {
		page.Items = make([]*Object, 0, sizeHint)
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
		o, err := d.object(v, typeMeta, rd.sc.spans.noted())
		if err != nil {
			return fmt.Errorf("item %d: %w", n, err)
		}
		page.Items = append(page.Items, o)
	}
}

// listMeta copies the list's metadata out of the read buffer.
func listMeta(v []byte, page *List) error {
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
