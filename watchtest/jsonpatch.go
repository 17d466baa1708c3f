package watchtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/listwatch/listwatch/apiserve"
)

// Patches work on objects decoded into maps, slices and json.Number, so
// that integers of any size come back exactly as they were sent.

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// mergePatch applies an RFC 7386 JSON merge patch: objects merge member by
// member, null deletes, anything else replaces.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// errPatchRejected is the real server's answer to any JSON patch that
// cannot be applied: a failed test, a missing path, an index out of range.
var errPatchRejected = &apiserve.Error{Code: http.StatusUnprocessableEntity, Reason: "Invalid", Message: "the server rejected our request due to an error in our request", Details: &apiserve.StatusDetails{}}

type jsonPatchOp struct {
	Op    string           `json:"op"`
	Path  string           `json:"path"`
	From  string           `json:"from"`
	Value *json.RawMessage `json:"value"`
}

// jsonPatch applies an RFC 6902 JSON patch to doc.
func jsonPatch(doc any, body []byte) (any, error) {
	var ops []jsonPatchOp
	if err := json.Unmarshal(body, &ops); err != nil {
		return nil, badRequest("error decoding patch: %v", err)
	}
	for _, op := range ops {
		var val any
		if op.Value != nil {
			v, err := decodeJSON(*op.Value)
			if err != nil {
				return nil, badRequest("error decoding patch: %v", err)
			}
			val = v
		}
		var err error
		if doc, err = applyOp(doc, op, val); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

func applyOp(doc any, op jsonPatchOp, val any) (any, error) {
	path, err := parsePointer(op.Path)
	if err != nil {
		return nil, err
	}
	switch op.Op {
	case "add":
		return pointerSet(doc, path, val, true)
	case "replace":
		return pointerSet(doc, path, val, false)
	case "remove":
		doc, _, err = pointerRemove(doc, path)
		return doc, err
	case "move", "copy":
		from, err := parsePointer(op.From)
		if err != nil {
			return nil, err
		}
		if len(from) == 0 {
			// The real server has no value at "" to copy or move: it would
			// put the object inside itself.
			return nil, errPatchRejected
		}
		v, ok := pointerGet(doc, from)
		if !ok {
			return nil, errPatchRejected
		}
		if op.Op == "move" {
			if doc, _, err = pointerRemove(doc, from); err != nil {
				return nil, err
			}
		} else {
			v = deepCopy(v)
		}
		return pointerSet(doc, path, v, true)
	case "test":
		v, ok := pointerGet(doc, path)
		if !ok && val == nil && len(path) > 0 {
			// As on the real server, a member missing from an object
			// that exists tests equal to null.
			parent, _ := pointerGet(doc, path[:len(path)-1])
			_, ok = parent.(map[string]any)
		}
		if !ok || !testEqual(v, val) {
			return nil, errPatchRejected
		}
		return doc, nil
	}
	return nil, errPatchRejected
}

// parsePointer splits an RFC 6901 JSON Pointer into unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, errPatchRejected
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func pointerGet(doc any, path []string) (any, bool) {
	for _, tok := range path {
		switch c := doc.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, ok := arrayIndex(tok, len(c), false)
			if !ok {
				return nil, false
			}
			doc = c[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

// pointerSet adds (insert into arrays) or replaces the value at path. Like
// the real server, replacing a missing object member adds it.
func pointerSet(doc any, path []string, val any, insert bool) (any, error) {
	if len(path) == 0 {
		return val, nil
	}
	parent, ok := pointerGet(doc, path[:len(path)-1])
	if !ok {
		return nil, errPatchRejected
	}
	last := path[len(path)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = val
		return doc, nil
	case []any:
		i := len(c)
		if last != "-" || !insert {
			n, ok := arrayIndex(last, len(c), insert)
			if !ok {
				return nil, errPatchRejected
			}
			i = n
		}
		if !insert {
			c[i] = val
			return doc, nil
		}
		c = append(c[:i], append([]any{val}, c[i:]...)...)
		return pointerSet(doc, path[:len(path)-1], c, false)
	}
	return nil, errPatchRejected
}

func pointerRemove(doc any, path []string) (any, any, error) {
	if len(path) == 0 {
		return nil, nil, errPatchRejected
	}
	parent, ok := pointerGet(doc, path[:len(path)-1])
	if !ok {
		return nil, nil, errPatchRejected
	}
	last := path[len(path)-1]
	switch c := parent.(type) {
	case map[string]any:
		v, ok := c[last]
		if !ok {
			return nil, nil, errPatchRejected
		}
		delete(c, last)
		return doc, v, nil
	case []any:
		i, ok := arrayIndex(last, len(c), false)
		if !ok {
			return nil, nil, errPatchRejected
		}
		v := c[i]
		rest := append(append([]any{}, c[:i]...), c[i+1:]...)
		doc, err := pointerSet(doc, path[:len(path)-1], rest, false)
		return doc, v, err
	}
	return nil, nil, errPatchRejected
}

func deepCopy(v any) any {
	switch c := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(c))
		for k, e := range c {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(c))
		for i, e := range c {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// jsonEqual compares decoded JSON values; numbers compare by value.
func jsonEqual(a, b any) bool {
	na, aok := a.(json.Number)
	nb, bok := b.(json.Number)
	if aok && bok {
		fa, err1 := na.Float64()
		fb, err2 := nb.Float64()
		if err1 == nil && err2 == nil && na.String() != nb.String() {
			return fa == fb
		}
		return na == nb
	}
	return reflect.DeepEqual(a, b)
}

// testEqual reports whether a JSON patch test of the document value v
// with the patch value p passes, as on the real server: numbers and
// strings compare by their text, the document's as the server writes it
// (so 2 is not 2.0), and objects and arrays member by member.
func testEqual(v, p any) bool {
	switch v := v.(type) {
	case json.Number:
		n, ok := p.(json.Number)
		return ok && canonicalNumber(v) == n.String()
	case map[string]any:
		m, ok := p.(map[string]any)
		if !ok || len(m) != len(v) {
			return false
		}
		for k, e := range v {
			if pe, ok := m[k]; !ok || !testEqual(e, pe) {
				return false
			}
		}
		return true
	case []any:
		a, ok := p.([]any)
		if !ok || len(a) != len(v) {
			return false
		}
		for i := range v {
			if !testEqual(v[i], a[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(v, p)
}

// canonicalNumber is how the real server writes a stored number: an
// integer as one, anything else as encoding/json writes a float64.
func canonicalNumber(n json.Number) string {
	if i, err := n.Int64(); err == nil {
		return strconv.FormatInt(i, 10)
	}
	f, err := n.Float64()
	if err != nil {
		return n.String()
	}
	b, err := json.Marshal(f)
	if err != nil {
		return n.String()
	}
	return string(b)
}

// encodeJSON encodes a decoded value back to compact JSON.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep <, > and & as sent, like the real server
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the patched object: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// arrayIndex reads an array index of a pointer into an array of n items.
// As on the real server, a negative index counts from the end: -1 is the
// last item, or, to insert, the place after it.
func arrayIndex(tok string, n int, insert bool) (int, bool) {
	i, err := strconv.Atoi(tok)
	if err != nil {
		return 0, false
	}
	end := n
	if insert {
		end = n + 1
	}
	if i < 0 {
		i += end
	}
	return i, i >= 0 && i < end
}
