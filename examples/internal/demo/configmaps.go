package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/listwatch/listwatch/watchtest"
)

// ConfigMapWorld is a Setup for a controller of configmaps: it serves
// leases, events and secrets too, creates n configmaps labelled app spread
// over Namespaces (cm-00, cm-01, ...), and until ctx is done replaces one
// of them every interval with new data, now and then adding a new one.
func ConfigMapWorld(ctx context.Context, n int, every time.Duration) func(*Server) error {
	return func(s *Server) error {
		s.AddResource(watchtest.Leases, watchtest.Definition{})
		s.AddResource(watchtest.Events, watchtest.Definition{})
		s.AddResource(watchtest.Secrets, watchtest.Definition{})
		for i := range n {
			if _, err := s.Create(watchtest.ConfigMaps, configMap(i, 0)); err != nil {
				return err
			}
		}
		rnd := rand.New(rand.NewPCG(1, 2))
		s.Churn(ctx, every, func() error {
			if rnd.IntN(10) == 0 {
				n++
				_, err := s.Create(watchtest.ConfigMaps, configMap(n-1, 0))
				return err
			}
			// Replaced whole: what a controller added (labels) goes.
			_, err := s.Update(watchtest.ConfigMaps, configMap(rnd.IntN(n), rnd.IntN(5)))
			return err
		})
		return nil
	}
}

func configMap(i, keys int) string {
	return fmt.Sprintf(`{"metadata":{"name":"cm-%02d","namespace":%q,"labels":{"app":"demo"}},"data":{"k%d":"v"}}`, i, Namespaces[i%len(Namespaces)], keys)
}
