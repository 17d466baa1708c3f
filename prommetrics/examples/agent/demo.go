package main

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/watchtest"
)

// demoServer serves six pods, three on node-1 and three on node-2, when
// nothing names a server, and makes node-1 the node watched unless one
// was named.
func demoServer(context.Context) (string, func(), error) {
	if node == "" {
		node = "node-1"
	}
	s := watchtest.NewServer()
	for i := range 6 {
		if _, err := s.Create(watchtest.Pods, fmt.Sprintf(`{"metadata":{"name":"pod-%d","namespace":"default"},"spec":{"nodeName":"node-%d"}}`, i, i%2+1)); err != nil {
			s.Close()
			return "", nil, err
		}
	}
	return s.URL, s.Close, nil
}
