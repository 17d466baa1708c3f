package watchtest

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/listwatch/listwatch/apiserve"
)

// owners maps a field manager to what it owns of an object. A value is
// never changed once stored: a write makes a new map.
type owners map[string]*fieldOwner

type fieldOwner struct {
	name       string // the field manager
	apply      bool   // operation Apply; otherwise Update
	apiVersion string // shown in conflicts with an Update manager
	fields     map[string]bool
	// time is when the manager last took or gave up fields, and
	// subresource where it wrote: what metadata.managedFields shows.
	time        string
	subresource string
}

// A field path is kept as its keys joined by pathSep, which no JSON key
// is expected to hold; it is shown as ".a.b.c".
const pathSep = "\x00"

func showPath(p string) string { return "." + strings.ReplaceAll(p, pathSep, ".") }

// related reports whether one path is the other or contains it.
func related(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+pathSep) || strings.HasPrefix(b, a+pathSep)
}

// ignoredLeaf tells the fields no manager owns: identity and what the
// server sets.
func ignoredLeaf(p string) bool {
	switch p {
	case "kind", "apiVersion":
		return true
	}
	if m, ok := strings.CutPrefix(p, "metadata"+pathSep); ok {
		return m == "name" || m == "namespace" || m == "resourceVersion" || m == "managedFields" ||
			slices.Contains(serverFields, m)
	}
	return false
}

// leaves flattens a decoded object into its leaf fields: scalars, lists
// (owned whole, coarser than the real server's per-item ownership) and
// empty objects.
func leaves(v any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			if prefix != "" && !ignoredLeaf(prefix) {
				out[prefix] = v
			}
			return
		}
		for k, e := range m {
			p := k
			if prefix != "" {
				p = prefix + pathSep + k
			}
			walk(p, e)
		}
	}
	walk("", v)
	return out
}

// decodeApply reads an apply configuration, YAML or JSON.
func decodeApply(body []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(body, &v); err != nil {
		return nil, badRequest("error encoding patch: %v", err)
	}
	b, err := encodeJSON(v)
	if err != nil {
		return nil, badRequest("error encoding patch: %v", err)
	}
	doc, err := decodeJSON(b)
	if err != nil {
		return nil, badRequest("error encoding patch: %v", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, badRequest("error decoding patch: the apply configuration is not an object")
	}
	av, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	if av == "" || kind == "" {
		if !strings.Contains(av, "/") {
			av = "/" + av
		}
		return nil, badRequest("invalid object type: %s, Kind=%s", av, kind)
	}
	return m, nil
}

// applyConflict is a field that an apply would change although another
// manager owns it.
type applyConflict struct {
	owner *fieldOwner
	path  string
}

// applyTo merges the configuration cfg of manager into the live object and
// returns the result with the new ownership. A field another manager owns
// with another value is a conflict, unless force moves it to this manager.
// Fields this manager applied before and no longer does are removed, unless
// another manager owns them too.
func applyTo(live, cfg map[string]any, prev owners, manager string, force bool) (map[string]any, owners, error) {
	want, have := leaves(cfg), leaves(live)
	next := prev.clone()
	delete(next, manager)
	var conflicts []applyConflict
	for p, v := range want {
		for _, o := range next {
			if o.name == manager {
				continue
			}
			conflicted := false
			for f := range o.fields {
				// The same value is shared ownership; a subtree others own
				// would be replaced, which the real server reports once, at
				// the path applied.
				if f == p && !jsonEqual(have[p], v) || strings.HasPrefix(f, p+pathSep) {
					if force {
						delete(o.fields, f)
					} else if !conflicted {
						conflicts = append(conflicts, applyConflict{o, p})
						conflicted = true
					}
				}
			}
		}
	}
	if len(conflicts) > 0 && !force && manager == "kubectl" {
		// As the real server upgrades an object from client-side apply:
		// kubectl's server-side apply takes, without conflict, the fields
		// the last-applied annotation holds with their live values.
		allowed := lastApplied(live)
		conflicts = slices.DeleteFunc(conflicts, func(c applyConflict) bool { return allowed[c.path] })
		if len(conflicts) == 0 {
			return applyTo(live, cfg, prev, manager, true)
		}
	}
	if len(conflicts) > 0 {
		return nil, nil, applyConflicts(conflicts)
	}
	if mine := prev[manager]; mine != nil {
		for p := range mine.fields {
			if _, ok := want[p]; !ok && !ownedByAny(next, p) {
				_, _, _ = pointerRemove(live, strings.Split(p, pathSep)) // already gone is fine
			}
		}
	}
	merged, _ := strategicMerge(live, cfg).(map[string]any)
	if len(want) > 0 {
		next[manager] = &fieldOwner{name: manager, apply: true, fields: map[string]bool{}}
		for p := range want {
			next[manager].fields[p] = true
		}
	}
	return merged, next.pruned(), nil
}

// lastAppliedAnnotation is where kubectl's client-side apply keeps what it
// applied.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// lastApplied is the set of leaf fields the live object's last-applied
// annotation holds with the values the object has.
func lastApplied(live map[string]any) map[string]bool {
	meta, _ := live["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	la, _ := ann[lastAppliedAnnotation].(string)
	doc, err := decodeJSON([]byte(la))
	if la == "" || err != nil {
		return nil
	}
	have := leaves(live)
	allowed := map[string]bool{}
	for p, v := range leaves(doc) {
		if hv, ok := have[p]; ok && jsonEqual(hv, v) {
			allowed[p] = true
		}
	}
	return allowed
}

func ownedByAny(o owners, p string) bool {
	for _, fo := range o {
		for f := range fo.fields {
			if related(f, p) {
				return true
			}
		}
	}
	return false
}

// pruned drops managers that own nothing.
func (o owners) pruned() owners {
	maps.DeleteFunc(o, func(_ string, fo *fieldOwner) bool { return len(fo.fields) == 0 })
	return o
}

// updateOwners records a write other than an apply: its manager takes the
// fields it changed, and fields it removed are no one's. Objects that
// only writes from Go ever touched keep no ownership at all.
func updateOwners(old, o *object, opts writeOptions, apiVersion string) owners {
	if len(old.owners) == 0 && opts.seed {
		return nil
	}
	before, err1 := decodeJSON(old.body)
	after, err2 := decodeJSON(o.body)
	if err1 != nil || err2 != nil {
		return old.owners
	}
	was, now := withMarkers(leaves(before), before), withMarkers(leaves(after), after)
	next := old.owners.clone()
	key := updateKey(opts.manager, opts.subresource)
	mine := next[key]
	if mine == nil {
		mine = &fieldOwner{name: opts.manager, apiVersion: apiVersion, subresource: opts.subresource, fields: map[string]bool{}}
		next[key] = mine
	}
	for p, v := range now {
		if w, ok := was[p]; ok && jsonEqual(w, v) {
			continue
		}
		for _, fo := range next {
			maps.DeleteFunc(fo.fields, func(f string, _ bool) bool { return related(f, p) })
		}
		mine.fields[p] = true
	}
	for p := range was {
		if _, ok := now[p]; !ok {
			for _, fo := range next {
				delete(fo.fields, p)
			}
		}
	}
	return next.pruned()
}

func (o owners) clone() owners {
	c := make(owners, len(o))
	for k, fo := range o {
		c[k] = &fieldOwner{name: fo.name, apply: fo.apply, apiVersion: fo.apiVersion, fields: maps.Clone(fo.fields), time: fo.time, subresource: fo.subresource}
	}
	return c
}

// applyConflicts is the real server's 409 for an apply that would take
// fields from other managers.
func applyConflicts(cs []applyConflict) *apiserve.Error {
	slices.SortFunc(cs, func(a, b applyConflict) int {
		if c := strings.Compare(showPath(a.path), showPath(b.path)); c != 0 {
			return c
		}
		return strings.Compare(a.owner.name, b.owner.name)
	})
	who := func(c applyConflict) string {
		if c.owner.apply {
			return fmt.Sprintf("%q", c.owner.name)
		}
		return fmt.Sprintf("%q using %s", c.owner.name, c.owner.apiVersion)
	}
	d := &apiserve.StatusDetails{}
	byManager := map[string][]string{}
	for _, c := range cs {
		d.Causes = append(d.Causes, apiserve.StatusCause{Reason: "FieldManagerConflict", Message: "conflict with " + who(c), Field: showPath(c.path)})
		byManager[who(c)] = append(byManager[who(c)], showPath(c.path))
	}
	var msg string
	if len(cs) == 1 {
		msg = fmt.Sprintf("Apply failed with 1 conflict: conflict with %s: %s", who(cs[0]), showPath(cs[0].path))
	} else {
		parts := []string{}
		for _, m := range slices.Sorted(maps.Keys(byManager)) {
			parts = append(parts, "conflicts with "+m+":\n- "+strings.Join(byManager[m], "\n- "))
		}
		msg = fmt.Sprintf("Apply failed with %d conflicts: %s", len(cs), strings.Join(parts, "\n"))
	}
	return &apiserve.Error{Code: http.StatusConflict, Reason: "Conflict", Message: msg, Details: d}
}
