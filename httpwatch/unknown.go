package httpwatch

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// send is c.do for a request on rc's resource, with a 404 explained.
func (rc *ResourceClient) send(ctx context.Context, rq request) (*http.Response, error) {
	resp, err := rc.c.do(ctx, rq)
	if err != nil {
		return nil, rc.explain(ctx, err)
	}
	return resp, nil
}

// explain tells what a 404 that names no object means. The server answers
// a missing object with a Status naming it (details.name), which stays a
// NotFound error: the object is gone. Any other 404 is the server having no
// handler for the path: the resource is misspelt, not served, or namespaced
// and addressed without a namespace, and must not read as "gone". Discovery
// says which, and suggests the likely name; when it cannot tell (the server
// has none, or the group version failed to answer) the error still wraps
// ErrUnknownResource and says why it could not check.
func (rc *ResourceClient) explain(ctx context.Context, err error) error {
	se, ok := asStatus(err)
	if !ok || se.Code != http.StatusNotFound || se.Details.Name != "" {
		return err
	}
	r := rc.res
	v, ar, why := rc.c.judge(ctx, r)
	var msg string
	switch {
	case v == notServed:
		return &explained{fmt.Sprintf("%s %s: %s", se.Verb, se.Path, why), []error{why, se}}
	case v == served && ar.Namespaced && rc.unnamespaced(se.Path):
		return &explained{fmt.Sprintf("%s %s: %s: %s", se.Verb, se.Path, r, ErrNamespaceRequired), []error{ErrNamespaceRequired, se}}
	case v == served:
		msg = fmt.Sprintf("the server serves %s but not this path (%s)", r, se.Message)
	default:
		msg = fmt.Sprintf("404 %s: %s is misspelt, not served, "+
			"or namespaced and addressed without a namespace (discovery cannot tell which: %v)", se.Message, r, why)
	}
	return &explained{fmt.Sprintf("%s %s: %s: %s", se.Verb, se.Path, msg, ErrUnknownResource), []error{ErrUnknownResource, se}}
}

// explained is a server's error told in terms of what discovery knows. It
// wraps both the explanation's sentinel and the server's *StatusError, for
// errors.As; IsNotFound declines it.
type explained struct {
	msg  string
	errs []error
}

func (e *explained) Error() string   { return e.msg }
func (e *explained) Unwrap() []error { return e.errs }

// unnamespaced reports whether path addresses rc's resource without a
// namespace.
func (rc *ResourceClient) unnamespaced(path string) bool {
	coll, err := rc.res.collectionPath("")
	return err == nil && (path == coll || strings.HasPrefix(path, coll+"/"))
}

// unknown is the error for r, which discovery does not list; the caller
// holds d.mu.
func (d *discovery) unknown(r Resource) error {
	gv := groupVersion{r.Group, r.Version}
	var msg string
	if d.gvs[gv] != nil {
		msg = fmt.Sprintf("%s serves no resource %q", gv.describe(), r.Resource)
	} else {
		var versions []string
		for _, other := range d.roots[gv.root()].order {
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
	all, _ := d.snapshot()
	if s := suggest(all, r); s != "" {
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

// suggest names the resource in rs a person most likely meant by r: one
// whose plural, singular, short name or kind is r's name in any case, else
// the closest within a small edit distance; the same group version wins
// ties, then the same group, then a preferred version, then the server's
// order. It is the plural alone within r's group version, and "plural in
// group/version" elsewhere; "" when nothing is close.
func suggest(rs []APIResource, r Resource) string {
	name := strings.ToLower(r.Resource)
	limit := min(2, len(name)/3)
	best, bestScore := -1, 0
	for i, a := range rs {
		d := a.distance(name)
		if d > limit {
			continue
		}
		score := d * 8
		switch {
		case a.Group == r.Group && a.Version == r.Version:
		case a.Group == r.Group:
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
	if a.Group == r.Group && a.Version == r.Version {
		return a.Resource.Resource
	}
	return a.Resource.Resource + " in " + groupVersion{a.Group, a.Version}.String()
}

// distance is the least edit distance from name (lower case) to a's
// plural, singular, short names and kind.
func (a APIResource) distance(name string) int {
	names := append([]string{a.Resource.Resource, a.Singular, a.Kind}, a.ShortNames...)
	d := len(name) + len(a.Resource.Resource)
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
