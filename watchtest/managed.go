package watchtest

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// The real server records in metadata.managedFields, for every write, who
// set which fields (decision 40). watchtest records the ownership it
// tracks for server-side apply (see owners) the same way: one entry per
// manager, operation and subresource, with the time it last took fields
// and its fields as a FieldsV1 set. Writes from Go (seeds) leave an object
// without entries as it is.

// mapFields are the fields whose values are maps the client fills rather
// than structs of the schema: an Update that creates one owns the map
// itself too, which FieldsV1 writes as ".".
var mapFields = map[string]bool{
	"labels": true, "annotations": true, "data": true, "binaryData": true, "stringData": true,
	"matchLabels": true, "nodeSelector": true, "limits": true, "requests": true,
}

// withMarkers adds to the leaves of v a path ending in "." for every map
// field present, so that an Update that creates the map owns it.
func withMarkers(leafs map[string]any, v any) map[string]any {
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, e := range m {
			p := k
			if prefix != "" {
				p = prefix + pathSep + k
			}
			if _, isMap := e.(map[string]any); isMap && mapFields[k] && !ignoredLeaf(p) {
				leafs[p+pathSep+"."] = true
			}
			walk(p, e)
		}
	}
	walk("", v)
	return leafs
}

// createOwners is the ownership a create records: its manager, in an
// Update entry, owns every field it set.
func createOwners(o *object, manager, apiVersion string) owners {
	doc, err := decodeJSON(o.body)
	if err != nil {
		return nil
	}
	fo := &fieldOwner{name: manager, apiVersion: apiVersion, fields: map[string]bool{}}
	for p := range withMarkers(leaves(doc), doc) {
		fo.fields[p] = true
	}
	if len(fo.fields) == 0 {
		return nil
	}
	return owners{updateKey(manager, ""): fo}
}

// updateKey keys an Update entry apart from an Apply entry of the same
// manager, and per subresource.
func updateKey(manager, sub string) string {
	return manager + pathSep + "update" + pathSep + sub
}

// stamp gives the entries of next that gained or lost fields since prev
// the time now; the others keep theirs.
func stamp(prev, next owners, now string) {
	for k, fo := range next {
		if p, ok := prev[k]; ok && maps.Equal(p.fields, fo.fields) && p.time != "" {
			fo.time = p.time
			continue
		}
		fo.time = now
	}
}

// managedFieldsJSON renders owners as metadata.managedFields, in the real
// server's order: by operation, time, manager, apiVersion, subresource.
func managedFieldsJSON(os owners, doc any, r resource) string {
	entries := slices.Collect(maps.Values(os))
	op := func(fo *fieldOwner) string {
		if fo.apply {
			return "Apply"
		}
		return "Update"
	}
	slices.SortFunc(entries, func(a, b *fieldOwner) int {
		for _, c := range [][2]string{{op(a), op(b)}, {a.time, b.time}, {a.name, b.name}, {a.apiVersion, b.apiVersion}, {a.subresource, b.subresource}} {
			if n := strings.Compare(c[0], c[1]); n != 0 {
				return n
			}
		}
		return 0
	})
	type entry struct {
		Manager     string `json:"manager"`
		Operation   string `json:"operation"`
		APIVersion  string `json:"apiVersion"`
		Time        string `json:"time"`
		FieldsType  string `json:"fieldsType"`
		FieldsV1    any    `json:"fieldsV1"`
		Subresource string `json:"subresource,omitempty"`
	}
	out := make([]entry, len(entries))
	for i, fo := range entries {
		av := fo.apiVersion
		if av == "" {
			av = r.apiVersion()
		}
		out[i] = entry{Manager: fo.name, Operation: op(fo), APIVersion: av, Time: fo.time,
			FieldsType: "FieldsV1", FieldsV1: fieldsV1(fo.fields, doc, r.BuiltIn), Subresource: fo.subresource}
	}
	b, _ := json.Marshal(out) // strings and maps of maps
	return string(b)
}

// fieldsV1 writes a set of owned paths as the real server's FieldsV1:
// "f:NAME" for a field, "." for the node itself. A list owned whole is
// written item by item as the real schema keys it: a built-in list merged
// on a key as "k:{KEY}" items, finalizers as "v:VALUE" items, any other
// list as the atomic field it is.
func fieldsV1(fields map[string]bool, doc any, builtIn bool) map[string]any {
	root := map[string]any{}
	for p := range fields {
		node, v := root, doc
		segs := strings.Split(p, pathSep)
		for i, s := range segs {
			if s == "." {
				node["."] = map[string]any{}
				break
			}
			child, ok := node["f:"+s].(map[string]any)
			if !ok {
				child = map[string]any{}
				node["f:"+s] = child
			}
			if m, ok := v.(map[string]any); ok {
				v = m[s]
			} else {
				v = nil
			}
			if i == len(segs)-1 {
				if list, ok := v.([]any); ok && builtIn {
					listItems(child, s, list)
				}
			}
			node = child
		}
	}
	lonelyDots(root)
	return root
}

// lonelyDots writes a field owned without any of its children as {}, not
// {".":{}}: "." appears only beside children, as the real server writes
// a set.
func lonelyDots(node map[string]any) {
	for k, v := range node {
		child, _ := v.(map[string]any)
		if _, dot := child["."]; dot && len(child) == 1 {
			node[k] = map[string]any{}
			continue
		}
		lonelyDots(child)
	}
}

// listItems writes the items of a keyed or set list into its node.
func listItems(node map[string]any, name string, list []any) {
	if setLists[name] {
		for _, e := range list {
			b, _ := json.Marshal(e) // a scalar of a decoded document
			node["v:"+string(b)] = map[string]any{}
		}
		return
	}
	keys := mergeKeys[name]
	if keys == nil {
		return
	}
	for _, e := range list {
		item, ok := e.(map[string]any)
		if !ok {
			continue
		}
		k := map[string]any{}
		for _, key := range keys {
			if v, ok := item[key]; ok {
				k[key] = v
				break
			}
		}
		if p, ok := item["protocol"]; ok && name == "ports" {
			k["protocol"] = p
		}
		if len(k) == 0 {
			continue
		}
		kb, _ := json.Marshal(k) // keys sorted, as the real server writes them
		in := map[string]any{".": map[string]any{}}
		for p := range leaves(item) {
			sub := map[string]bool{p: true}
			mergeInto(in, fieldsV1(sub, item, true))
		}
		node["k:"+string(kb)] = in
	}
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		sv, _ := v.(map[string]any)
		dv, ok := dst[k].(map[string]any)
		if !ok {
			dst[k] = sv
			continue
		}
		mergeInto(dv, sv)
	}
}

// parseManagedFields reads metadata.managedFields as a client sent them
// back into ownership: a field for each "f:" path, the "." of a map field,
// and a list, whose items FieldsV1 names, owned whole. Entries that do not
// parse are dropped; none at all ([]) is no ownership.
func parseManagedFields(raw string) owners {
	var entries []struct {
		Manager     string         `json:"manager"`
		Operation   string         `json:"operation"`
		APIVersion  string         `json:"apiVersion"`
		Time        string         `json:"time"`
		FieldsV1    map[string]any `json:"fieldsV1"`
		Subresource string         `json:"subresource"`
	}
	if err := json.Unmarshal([]byte(raw), &entries); err != nil {
		return owners{}
	}
	out := owners{}
	for _, e := range entries {
		fo := &fieldOwner{name: e.Manager, apply: e.Operation == "Apply", apiVersion: e.APIVersion, time: e.Time,
			subresource: e.Subresource, fields: map[string]bool{}}
		var walk func(prefix string, node map[string]any)
		walk = func(prefix string, node map[string]any) {
			if len(node) == 0 && prefix != "" {
				fo.fields[prefix] = true
				return
			}
			for k, v := range node {
				child, _ := v.(map[string]any)
				switch {
				case k == ".":
					if prefix != "" {
						fo.fields[prefix+pathSep+"."] = true
					}
				case strings.HasPrefix(k, "k:"), strings.HasPrefix(k, "v:"), strings.HasPrefix(k, "i:"):
					if prefix != "" {
						fo.fields[prefix] = true // the list, owned whole
					}
				case strings.HasPrefix(k, "f:"):
					p := k[2:]
					if prefix != "" {
						p = prefix + pathSep + p
					}
					walk(p, child)
				}
			}
		}
		walk("", e.FieldsV1)
		if len(fo.fields) == 0 {
			continue
		}
		key := e.Manager
		if !fo.apply {
			key = updateKey(e.Manager, e.Subresource)
		}
		out[key] = fo
	}
	return out
}
