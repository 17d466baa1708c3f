package indexer_test

import (
	"fmt"
	"testing"

	"github.com/listwatch/listwatch/indexer"
)

func twoIndexCache() *indexer.Cache[*obj] {
	return indexer.New(key, indexer.Indexers[*obj]{
		indexer.Namespace: indexer.NamespaceIndex[*obj],
		byApp:             indexer.LabelIndex[*obj]("app"),
	})
}

func population(n int) []*obj {
	objs := make([]*obj, n)
	for i := range objs {
		objs[i] = pod(fmt.Sprint("ns-", i%100), fmt.Sprint("pod-", i), fmt.Sprint("app-", i%1000))
	}
	return objs
}

// BenchmarkAdd fills an empty cache with two indices with 10,000 new
// objects, over and over; ns/op is per object.
func BenchmarkAdd(b *testing.B) {
	objs := population(10000)
	b.ReportAllocs()
	var c *indexer.Cache[*obj]
	for i := range b.N {
		if i%len(objs) == 0 {
			b.StopTimer()
			c = twoIndexCache()
			b.StartTimer()
		}
		if err := c.Add(objs[i%len(objs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdate rewrites objects of a 10,000-item cache with two indices,
// moving each to another label value half of the time.
func BenchmarkUpdate(b *testing.B) {
	objs := population(10000)
	c := twoIndexCache()
	fill(b, c, objs)
	next := make([]*obj, len(objs))
	for i, o := range objs {
		next[i] = pod(o.ns, o.name, fmt.Sprint("app-", (i+i%2)%1000))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		o := next[i%len(next)]
		if i/len(next)%2 == 1 {
			o = objs[i%len(objs)]
		}
		if err := c.Update(o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkByIndex queries a 100,000-item cache: 1,000 objects per
// namespace, 100 per app label.
func BenchmarkByIndex(b *testing.B) {
	c := twoIndexCache()
	fill(b, c, population(100000))
	for _, bc := range []struct{ name, index, value string }{
		{"namespace", indexer.Namespace, "ns-7"},
		{"label", byApp, "app-7"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				objs, err := c.ByIndex(bc.index, bc.value)
				if err != nil || len(objs) == 0 {
					b.Fatal(err, len(objs))
				}
			}
		})
	}
}

func fill(b *testing.B, c *indexer.Cache[*obj], objs []*obj) {
	for _, o := range objs {
		if err := c.Add(o); err != nil {
			b.Fatal(err)
		}
	}
}
