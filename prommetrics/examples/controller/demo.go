package main

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/watchtest"
)

// demoServer serves five configmaps labelled app, and leases, events and
// secrets, when nothing names a server.
func demoServer(context.Context) (string, func(), error) {
	s := watchtest.NewServer()
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	s.AddResource(watchtest.Events, watchtest.Definition{})
	s.AddResource(watchtest.Secrets, watchtest.Definition{})
	for i := range 5 {
		if _, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":"demo-%d","namespace":"default","labels":{"app":"demo"}},"data":{"k":"v"}}`, i)); err != nil {
			s.Close()
			return "", nil, err
		}
	}
	return s.URL, s.Close, nil
}
