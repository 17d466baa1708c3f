package prommetrics

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
)

// informers reads each informer's Stats on a scrape: nothing is counted
// on the informers' own paths, and an informer a factory makes later is
// seen at the next scrape.
type informers struct {
	factories []*listwatch.Factory
	fixed     []*listwatch.Informer // outside a factory, named by Reflector.Name
	d         informerDescs
}

// named is an informer with its labels.
type named struct {
	inf                 *listwatch.Informer
	resource, namespace string
}

// all returns every informer once, factories' first (sorted), each with
// labels no other has: a name taken already gets "-2", "-3"....
func (c *informers) all() []named {
	var out []named
	seen := map[*listwatch.Informer]bool{}
	taken := map[[2]string]int{}
	add := func(inf *listwatch.Informer, resource, namespace string) {
		if seen[inf] {
			return
		}
		seen[inf] = true
		n := taken[[2]string{resource, namespace}] + 1
		taken[[2]string{resource, namespace}] = n
		if n > 1 {
			resource = fmt.Sprintf("%s-%d", resource, n)
		}
		out = append(out, named{inf, resource, namespace})
	}
	for _, f := range c.factories {
		infs := f.Informers()
		for _, r := range slices.SortedFunc(maps.Keys(infs), func(a, b httpwatch.Resource) int {
			return cmp.Or(cmp.Compare(a.String(), b.String()), cmp.Compare(a.Namespace, b.Namespace))
		}) {
			add(infs[r], r.String(), r.Namespace)
		}
	}
	for _, inf := range c.fixed {
		add(inf, inf.Reflector.Name, "")
	}
	return out
}

func (c *informers) Describe(ch chan<- *prometheus.Desc) { c.d.describe(ch) }

func (c *informers) Collect(ch chan<- prometheus.Metric) {
	for _, n := range c.all() {
		c.d.collect(ch, n)
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
