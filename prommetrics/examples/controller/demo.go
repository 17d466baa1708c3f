package main

import (
	"fmt"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// connect returns the configuration the flags give or, when they give
// none and none is found, an embedded fake API server's holding a few
// configmaps, with the function that stops it.
func connect(kf *kubeconfig.Flags) (*kubeconfig.Config, func(), error) {
	cfg, err := kf.Load()
	if err == nil || kf.Server != "" || kf.Kubeconfig != "" || kf.Context != "" {
		return cfg, func() {}, err
	}
	s := watchtest.NewServer()
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	for i := range 5 {
		if _, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":"demo-%d","namespace":"default"}}`, i)); err != nil {
			s.Close()
			return nil, nil, err
		}
	}
	return &kubeconfig.Config{Host: s.URL}, s.Close, nil
}
