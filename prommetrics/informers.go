package prommetrics

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/cacheserve"
)

// informers reads each informer's Stats on a scrape: nothing is counted
// on the informers' own paths, and an informer a factory makes later is
// seen at the next scrape.
type informers struct {
	factories []*listwatch.Factory
	fixed     []*listwatch.Informer // outside a factory
	served    *cacheserve.Server    // its informers, read at each scrape
	d         informerDescs
}

// named is an informer with its labels: its Name, unique, and its
// identity's resource and namespace, to group by.
type named struct {
	inf                           *listwatch.Informer
	informer, resource, namespace string
}

// all returns every informer once, factories' first (sorted), each
// labelled by its Name (decision 41: the identity, told apart with "#2"
// while another running informer of its server has it). Two informers
// that still share a name (of two servers, or never run) are refused:
// the second is returned in clash, and the scrape fails naming it, rather
// than one of them being renamed in metrics alone.
func (c *informers) all() (out []named, clash []string) {
	seen := map[*listwatch.Informer]bool{}
	taken := map[string]bool{}
	add := func(inf *listwatch.Informer) {
		if seen[inf] {
			return
		}
		seen[inf] = true
		name := inf.Name()
		if taken[name] {
			clash = append(clash, name)
			return
		}
		taken[name] = true
		id := inf.Identity()
		out = append(out, named{inf, name, id.Resource.String(), id.Resource.Namespace})
	}
	for _, f := range c.factories {
		infs := f.Informers()
		for _, id := range slices.SortedFunc(maps.Keys(infs), func(a, b listwatch.Identity) int {
			return cmp.Compare(a.String(), b.String())
		}) {
			add(infs[id])
		}
	}
	for _, inf := range c.fixed {
		add(inf)
	}
	if c.served != nil {
		for _, inf := range c.served.Informers() {
			add(inf)
		}
	}
	return out, clash
}

func (c *informers) Describe(ch chan<- *prometheus.Desc) { c.d.describe(ch) }

func (c *informers) Collect(ch chan<- prometheus.Metric) {
	out, clash := c.all()
	for _, n := range out {
		c.d.collect(ch, n)
	}
	for _, name := range clash {
		ch <- prometheus.NewInvalidMetric(c.d.objects, fmt.Errorf(
			"two informers named %q: share one through a Factory, or set one's Reflector.Name", name))
	}
}

// bytesOf sums the JSON of the objects inf caches. It holds the cache's
// read lock while it does: about a millisecond per 100,000 objects, once
// per scrape.
func bytesOf(inf *listwatch.Informer) int64 {
	var n int64
	inf.Indexer().View(func(items map[string]*listwatch.Object) {
		for _, o := range items {
			n += int64(len(o.Raw()))
		}
	})
	return n
}
