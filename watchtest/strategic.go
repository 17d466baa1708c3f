package watchtest

import (
	"slices"
	"strings"
)

// mergeKeys approximates the patch strategies that the built-in types
// declare in their Go struct tags: a list under one of these field names,
// whose items are objects, is merged item by item, matching items on the
// first of the keys they carry. Every other list is replaced whole.
var mergeKeys = map[string][]string{
	"containers":                {"name"},
	"initContainers":            {"name"},
	"ephemeralContainers":       {"name"},
	"env":                       {"name"},
	"volumes":                   {"name"},
	"imagePullSecrets":          {"name"},
	"resourceClaims":            {"name"},
	"ports":                     {"containerPort", "port"},
	"volumeMounts":              {"mountPath"},
	"volumeDevices":             {"devicePath"},
	"conditions":                {"type"},
	"ownerReferences":           {"uid"},
	"hostAliases":               {"ip"},
	"topologySpreadConstraints": {"topologyKey"},
}

// setLists are lists of strings the built-in types merge as sets.
var setLists = map[string]bool{"finalizers": true}

// strategicMerge applies a strategic merge patch, approximated: merge patch
// semantics, plus the keyed and set lists above, plus the directives
// "$patch": "replace" (on an object) and "$patch": "delete" (on an object,
// or on an item of a keyed list), and those applyDirectives reads.
func strategicMerge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	switch p["$patch"] {
	case "replace":
		out := deepCopy(p).(map[string]any)
		delete(out, "$patch")
		return out
	case "delete":
		return nil
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		switch {
		case strings.HasPrefix(k, "$"):
			continue // directives, applied below; never stored
		case v == nil:
			delete(t, k)
		case setLists[k]:
			t[k] = mergeSet(t[k], v)
		case mergeKeys[k] != nil:
			t[k] = mergeList(t[k], v, mergeKeys[k])
		default:
			if r := strategicMerge(t[k], v); r != nil {
				t[k] = r
			} else {
				delete(t, k)
			}
		}
	}
	applyDirectives(t, p)
	return t
}

// applyDirectives applies the directives of patch p that kubectl sends
// beside the fields, to t, the merged object:
// "$deleteFromPrimitiveList/F" removes values from the list F,
// "$setElementOrder/F" puts the items of F it names in its order (the
// others keep their places), and "$retainKeys" clears the fields it does
// not name.
func applyDirectives(t, p map[string]any) {
	for k, v := range p {
		name, field, _ := strings.Cut(k, "/")
		switch list, _ := v.([]any); name {
		case "$deleteFromPrimitiveList":
			if items, ok := t[field].([]any); ok {
				t[field] = slices.DeleteFunc(slices.Clone(items), func(it any) bool { return slices.Contains(list, it) })
			}
		case "$setElementOrder":
			if items, ok := t[field].([]any); ok {
				t[field] = setOrder(items, list, mergeKeys[field])
			}
		case "$retainKeys":
			for f := range t {
				if !slices.Contains(list, any(f)) {
					delete(t, f)
				}
			}
		}
	}
}

// setOrder returns items with those that order names (by their merge key,
// or as values for a list of primitives) in order's sequence, in the
// places such items held; the other items keep their places.
func setOrder(items, order []any, keys []string) []any {
	rank := func(it any) int {
		return slices.IndexFunc(order, func(o any) bool {
			om, ok1 := o.(map[string]any)
			im, ok2 := it.(map[string]any)
			if !ok1 || !ok2 {
				return jsonEqual(o, it)
			}
			k := listKey([]any{om}, keys)
			return k != "" && jsonEqual(om[k], im[k])
		})
	}
	var places []int
	var named []any
	for i, it := range items {
		if rank(it) >= 0 {
			places, named = append(places, i), append(named, it)
		}
	}
	slices.SortStableFunc(named, func(a, b any) int { return rank(a) - rank(b) })
	out := slices.Clone(items)
	for i, at := range places {
		out[at] = named[i]
	}
	return out
}

// mergeSet adds the patch's strings to the target's, keeping order.
func mergeSet(target, patch any) any {
	t, ok1 := target.([]any)
	p, ok2 := patch.([]any)
	if !ok1 || !ok2 {
		return patch
	}
	out := append([]any(nil), t...)
	for _, v := range p {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// mergeList merges lists of objects item by item on a key; a list whose
// items have none of the keys is replaced, as an atomic list is.
func mergeList(target, patch any, keys []string) any {
	t, ok1 := target.([]any)
	p, ok2 := patch.([]any)
	if !ok1 || !ok2 {
		return patch
	}
	key := listKey(p, keys)
	if key == "" {
		return patch
	}
	at := func(list []any, item map[string]any) int {
		return slices.IndexFunc(list, func(o any) bool {
			om, ok := o.(map[string]any)
			return ok && jsonEqual(om[key], item[key])
		})
	}
	var patched []ordered // the patch's items, merged, in the patch's order
	for _, pi := range p {
		pm := pi.(map[string]any)
		i := at(t, pm)
		switch {
		case pm["$patch"] == "delete":
		case i >= 0:
			patched = append(patched, ordered{strategicMerge(t[i], pm), i})
		default:
			patched = append(patched, ordered{strategicMerge(nil, pm), -1})
		}
	}
	var kept []ordered // the server's items the patch does not name
	for i, ti := range t {
		if tm, ok := ti.(map[string]any); !ok || at(p, tm) < 0 {
			kept = append(kept, ordered{ti, i})
		}
	}
	return interleave(patched, kept)
}

// ordered is a list item and its index in the server's list (-1: new).
type ordered struct {
	v   any
	pos int
}

// interleave merges the patch's items with the server's other items as the
// real server orders them: where both have a place in the server's list
// that place decides; otherwise the patch's item goes first. A new item
// thus comes before the server's items that follow it.
func interleave(patched, kept []ordered) []any {
	out := make([]any, 0, len(patched)+len(kept))
	for len(patched) > 0 && len(kept) > 0 {
		if p := patched[0]; p.pos < 0 || p.pos < kept[0].pos {
			out, patched = append(out, p.v), patched[1:]
		} else {
			out, kept = append(out, kept[0].v), kept[1:]
		}
	}
	for _, o := range append(patched, kept...) {
		out = append(out, o.v)
	}
	return out
}

// listKey returns the first key that every item of the list carries. Every
// item of an empty list carries the first key, so an empty patch list of a
// keyed list merges nothing and leaves the server's items, as on the real
// server, where only "$patch": "replace" or null clears such a list.
func listKey(items []any, keys []string) string {
	for _, k := range keys {
		all := true
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok || m[k] == nil {
				all = false
				break
			}
		}
		if all {
			return k
		}
	}
	return ""
}
