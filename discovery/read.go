package discovery

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// acceptDiscovery asks for aggregated discovery, which lists every group's
// resources in one response: v2 (servers since 1.30), else v2beta1 (1.26
// to 1.29), else the plain form, which then takes one request per group
// version.
const acceptDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," +
	"application/json"

// fetchTimeout bounds one discovery request, whatever the client's
// Timeout: the first request of a program waits for discovery.
const fetchTimeout = 10 * time.Second

// fetchParallel bounds the group version documents read at once under
// legacy discovery.
const fetchParallel = 8

// errStale is a group version the server lists in aggregated discovery but
// could not read itself (its aggregated API is down).
var errStale = errors.New("the server marks it stale: the API service behind it is not answering")

// readRoot reads /api or /apis, and under legacy discovery the documents of
// the group versions it lists that are new or due for a retry. The caller
// has marked the root busy.
func (c *Cache) readRoot(ctx context.Context, i int) {
	body, err := c.get(ctx, rootPaths[i], acceptDiscovery)
	var (
		order      []groupVersion
		docs       map[groupVersion]*gvDoc
		aggregated bool
	)
	if err == nil {
		doc := gjson.ParseBytes(body)
		switch kind := doc.Get("kind").String(); kind {
		case "APIGroupDiscoveryList":
			aggregated = true
			order, docs = parseAggregated(doc)
		case "APIVersions", "APIGroupList":
			order, docs = parseLegacyRoot(doc)
		default:
			err = fmt.Errorf("GET %s: unexpected kind %q", rootPaths[i], kind)
		}
	}
	now := c.Clock.Now()
	c.mu.Lock()
	root := &c.roots[i]
	root.done(ctx, now, err)
	if err != nil {
		c.mu.Unlock()
		return
	}
	root.aggregated, root.order = aggregated, order
	for gv := range c.gvs {
		if _, listed := docs[gv]; !listed && gv.root() == i {
			delete(c.gvs, gv)
		}
	}
	var toRead []groupVersion
	for _, gv := range order {
		fresh, old := docs[gv], c.gvs[gv]
		switch {
		case aggregated:
			if old != nil {
				fresh.wait = old.wait // a stale group version backs off
			}
			fresh.done(ctx, now, fresh.err)
			c.gvs[gv] = fresh
		case old == nil:
			fresh.busy = true
			c.gvs[gv] = fresh
			toRead = append(toRead, gv)
		default:
			old.preferred = fresh.preferred
			for j := range old.resources {
				old.resources[j].Preferred = fresh.preferred
			}
			if old.err != nil && old.due(now) {
				old.busy = true
				toRead = append(toRead, gv)
			}
		}
	}
	c.mu.Unlock()
	c.readGroupVersions(ctx, toRead)
}

// readGroupVersions reads the documents of gvs, a few at a time, and
// returns when all are read; the caller has marked them busy.
func (c *Cache) readGroupVersions(ctx context.Context, gvs []groupVersion) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, fetchParallel)
	for _, gv := range gvs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			c.readGroupVersion(ctx, gv)
		}()
	}
	wg.Wait()
}

// readGroupVersion reads one group version's document (legacy discovery);
// the caller has marked it busy.
func (c *Cache) readGroupVersion(ctx context.Context, gv groupVersion) {
	path := "/api/" + url.PathEscape(gv.version)
	if gv.group != "" {
		path = "/apis/" + url.PathEscape(gv.group) + "/" + url.PathEscape(gv.version)
	}
	body, err := c.get(ctx, path, "application/json")
	var rs []APIResource
	if err == nil {
		doc := gjson.ParseBytes(body)
		if kind := doc.Get("kind").String(); kind != "APIResourceList" {
			err = fmt.Errorf("GET %s: unexpected kind %q", path, kind)
		}
		rs = resourceList(doc, gv.group, gv.version)
	}
	now := c.Clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	doc := c.gvs[gv]
	if doc == nil {
		return // its root, read again meanwhile, no longer lists it
	}
	doc.done(ctx, now, err)
	if err == nil {
		for i := range rs {
			rs[i].Preferred = doc.preferred
		}
		doc.resources = rs
	}
}

// parseAggregated reads an APIGroupDiscoveryList (v2 or v2beta1, the same
// shape): groups in priority order, each with its versions, preferred
// first, each version with its resources and its freshness.
func parseAggregated(doc gjson.Result) ([]groupVersion, map[groupVersion]*gvDoc) {
	var order []groupVersion
	docs := map[groupVersion]*gvDoc{}
	for _, g := range doc.Get("items").Array() {
		group := g.Get("metadata.name").String()
		for i, v := range g.Get("versions").Array() {
			gv := groupVersion{group, v.Get("version").String()}
			d := &gvDoc{preferred: i == 0}
			if v.Get("freshness").String() == "Stale" {
				d.err = errStale
			}
			for _, r := range v.Get("resources").Array() {
				ar := APIResource{
					Group:      group,
					Version:    gv.version,
					Resource:   r.Get("resource").String(),
					Kind:       r.Get("responseKind.kind").String(),
					Namespaced: r.Get("scope").String() == "Namespaced",
					Singular:   r.Get("singularResource").String(),
					ShortNames: stringsOf(r.Get("shortNames")),
					Verbs:      stringsOf(r.Get("verbs")),
					Preferred:  d.preferred,
				}
				for _, s := range r.Get("subresources").Array() {
					ar.Subresources = append(ar.Subresources, s.Get("subresource").String())
				}
				d.resources = append(d.resources, ar)
			}
			if docs[gv] == nil {
				order = append(order, gv)
			}
			docs[gv] = d
		}
	}
	return order, docs
}

// parseLegacyRoot reads APIVersions (/api: the core versions, preferred
// first) or APIGroupList (/apis: each group's versions and its preferred
// one). The documents it returns are yet to be read.
func parseLegacyRoot(doc gjson.Result) ([]groupVersion, map[groupVersion]*gvDoc) {
	var order []groupVersion
	docs := map[groupVersion]*gvDoc{}
	add := func(gv groupVersion, preferred bool) {
		if docs[gv] == nil {
			order = append(order, gv)
			docs[gv] = &gvDoc{preferred: preferred, reads: reads{err: errNotRead}}
		}
	}
	for i, v := range doc.Get("versions").Array() {
		add(groupVersion{version: v.String()}, i == 0)
	}
	for _, g := range doc.Get("groups").Array() {
		name, pref := g.Get("name").String(), g.Get("preferredVersion.version").String()
		for _, v := range g.Get("versions").Array() {
			add(groupVersion{name, v.Get("version").String()}, v.Get("version").String() == pref)
		}
	}
	return order, docs
}

// errNotRead is a group version listed but not read yet.
var errNotRead = errors.New("not read yet")

// resourceList reads an APIResourceList, where subresources are entries of
// their own named "RESOURCE/SUB".
func resourceList(doc gjson.Result, group, version string) []APIResource {
	var out []APIResource
	index := map[string]int{}
	for _, r := range doc.Get("resources").Array() {
		name := r.Get("name").String()
		if parent, sub, ok := strings.Cut(name, "/"); ok {
			if i, found := index[parent]; found {
				out[i].Subresources = append(out[i].Subresources, sub)
			}
			continue
		}
		index[name] = len(out)
		out = append(out, APIResource{
			Group:      group,
			Version:    version,
			Resource:   name,
			Kind:       r.Get("kind").String(),
			Namespaced: r.Get("namespaced").Bool(),
			Singular:   r.Get("singularName").String(),
			ShortNames: stringsOf(r.Get("shortNames")),
			Verbs:      stringsOf(r.Get("verbs")),
		})
	}
	return out
}

func stringsOf(a gjson.Result) []string {
	var out []string
	for _, v := range a.Array() {
		out = append(out, v.String())
	}
	return out
}

// get reads one document, within fetchTimeout.
func (c *Cache) get(ctx context.Context, path, accept string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	return c.fetch.Fetch(ctx, path, accept)
}
