package selector_test

import (
	"fmt"

	"github.com/listwatch/listwatch/selector"
)

func Example() {
	sel, err := selector.Parse("tier in (gold, silver), app = web, !canary")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel)
	fmt.Println(sel.Matches(selector.Set{"app": "web", "tier": "gold"}))
	fmt.Println(sel.Matches(selector.Set{"app": "web", "tier": "gold", "canary": "true"}))

	_, err = selector.Parse("app=web, tier in (gold")
	fmt.Println(err)
	// Output:
	// app=web,!canary,tier in (gold,silver)
	// true
	// false
	// selector "app=web, tier in (gold": at offset 22: found end of string, expected: a value, ',' or ')' in the values of key "tier"
}

func ExampleParseFields() {
	sel, err := selector.ParseFields("metadata.namespace=prod,spec.nodeName=")
	if err != nil {
		fmt.Println(err)
		return
	}
	pod := selector.Set{"metadata.namespace": "prod", "metadata.name": "web-1"}
	fmt.Println(sel.Matches(pod)) // no spec.nodeName: not scheduled yet
	// Output: true
}
