package store_test

import (
	"fmt"

	"github.com/listwatch/listwatch/store"
)

// pod is any type with a namespace and a name; *raw.Object is one.
type pod struct{ ns, name, node string }

func (p *pod) Namespace() string { return p.ns }
func (p *pod) Name() string      { return p.name }

func Example() {
	s := store.New(store.MetaNamespaceKey[*pod])
	_ = s.Add(&pod{"default", "web", "n1"})
	_ = s.Add(&pod{"default", "web", "n2"}) // the same key: replaced
	_ = s.Add(&pod{"", "cluster-wide", "n1"})

	p, ok, _ := s.GetByKey(store.JoinKey("default", "web"))
	fmt.Println(ok, p.node, s.Len())

	ns, name, _ := store.SplitKey("default/web")
	fmt.Println(ns, name)
	// Output:
	// true n2 2
	// default web
}
