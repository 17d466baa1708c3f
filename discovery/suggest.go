package discovery

import (
	"fmt"
	"strings"
)

// unknown is the error for resource in gv, which discovery does not list;
// the caller holds c.mu.
func (c *Cache) unknown(gv groupVersion, resource string) error {
	var msg string
	if c.gvs[gv] != nil {
		msg = fmt.Sprintf("%s serves no resource %q", gv.describe(), resource)
	} else {
		var versions []string
		for _, other := range c.roots[gv.root()].order {
			if other.group == gv.group {
				versions = append(versions, other.String())
			}
		}
		switch {
		case len(versions) > 0:
			msg = fmt.Sprintf("the server serves no %s (it serves %s)", gv, strings.Join(versions, ", "))
		case gv.group == "":
			msg = fmt.Sprintf("the server serves no core version %q", gv.version)
		default:
			msg = fmt.Sprintf("the server serves no API group %q", gv.group)
		}
	}
	all, _ := c.snapshot()
	if s := suggest(all, gv, resource); s != "" {
		msg += " (did you mean " + s + "?)"
	}
	return fmt.Errorf("%s: %w", msg, ErrUnknownResource)
}

func (gv groupVersion) describe() string {
	if gv.group == "" {
		return "the core API " + gv.version
	}
	return gv.String()
}

// suggest names the resource in rs a person most likely meant by resource
// in gv: one whose plural, singular, short name or kind is the name in any
// case, else the closest within a small edit distance; the same group
// version wins ties, then the same group, then a preferred version, then
// the server's order. It is the plural alone within gv, and "plural in
// group/version" elsewhere; "" when nothing is close.
func suggest(rs []APIResource, gv groupVersion, resource string) string {
	name := strings.ToLower(resource)
	limit := min(2, len(name)/3)
	best, bestScore := -1, 0
	for i, a := range rs {
		d := a.distance(name)
		if d > limit {
			continue
		}
		score := d * 8
		switch {
		case a.Group == gv.group && a.Version == gv.version:
		case a.Group == gv.group:
			score += 2
		default:
			score += 4
		}
		if !a.Preferred {
			score++
		}
		if best < 0 || score < bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return ""
	}
	a := rs[best]
	if a.Group == gv.group && a.Version == gv.version {
		return a.Resource
	}
	return a.Resource + " in " + groupVersion{a.Group, a.Version}.String()
}

// distance is the least edit distance from name (lower case) to a's
// plural, singular, short names and kind.
func (a APIResource) distance(name string) int {
	names := append([]string{a.Resource, a.Singular, a.Kind}, a.ShortNames...)
	d := len(name) + len(a.Resource)
	for _, n := range names {
		if n != "" {
			d = min(d, editDistance(name, strings.ToLower(n)))
		}
	}
	return d
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (resource names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
