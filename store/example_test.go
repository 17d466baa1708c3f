package store_test

import (
	"fmt"

	"github.com/listwatch/listwatch/store"
)

type pod struct{ namespace, name string }

func (p pod) Namespace() string { return p.namespace }
func (p pod) Name() string      { return p.name }

func Example() {
	c := store.New(store.MetaNamespaceKey[pod])
	_ = c.Add(pod{"default", "web-0"})
	_ = c.Add(pod{"", "node-1"})

	p, ok, _ := c.GetByKey("default/web-0")
	fmt.Println(p.name, ok)

	ns, name, _ := store.SplitKey("default/web-0")
	fmt.Println(ns, name)
	// Output:
	// web-0 true
	// default web-0
}
