package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/listwatch/listwatch/httpwatch/watchtest"
)

// demoNamespaces and demoPods size the embedded server's world.
var demoNamespaces = []string{"shop", "billing", "search"}

const demoPods = 30

// startDemo starts an embedded API server holding demo pods and config maps
// and a goroutine that keeps changing them until ctx is done.
func startDemo(ctx context.Context) (*watchtest.Server, func(), error) {
	s := watchtest.NewServer()
	s.BookmarkInterval = 10 * time.Second
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range demoPods {
		ns := demoNamespaces[i%len(demoNamespaces)]
		if _, err := s.Create(watchtest.Pods, demoPod(ns, fmt.Sprintf("web-%02d", i), "Running", 0)); err != nil {
			s.Close()
			return nil, nil, fmt.Errorf("demo server: %w", err)
		}
	}
	for _, ns := range demoNamespaces {
		if _, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":"settings","namespace":%q},"data":{"replicas":"3"}}`, ns)); err != nil {
			s.Close()
			return nil, nil, fmt.Errorf("demo server: %w", err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		churn(ctx, s, rnd)
	}()
	return s, func() { <-done; s.Close() }, nil
}

// churn updates, adds and deletes demo pods a few times a second.
func churn(ctx context.Context, s *watchtest.Server, rnd *rand.Rand) {
	tick := time.NewTicker(400 * time.Millisecond)
	defer tick.Stop()
	next := demoPods
	phases := []string{"Pending", "Running", "Succeeded"}
	for gen := 1; ; gen++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		i := rnd.IntN(next)
		ns := demoNamespaces[i%len(demoNamespaces)]
		name := fmt.Sprintf("web-%02d", i)
		var err error
		switch rnd.IntN(10) {
		case 0:
			_, err = s.Delete(watchtest.Pods, ns, name)
		case 1:
			ns = demoNamespaces[next%len(demoNamespaces)]
			_, err = s.Create(watchtest.Pods, demoPod(ns, fmt.Sprintf("web-%02d", next), "Pending", gen))
			next++
		default:
			_, err = s.Update(watchtest.Pods, demoPod(ns, name, phases[rnd.IntN(len(phases))], gen))
		}
		_ = err // a pod deleted earlier cannot be updated: the demo just moves on
	}
}

func demoPod(ns, name, phase string, gen int) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q,"labels":{"app":"web","generation":"%d"},`+
		`"managedFields":[{"manager":"demo","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:phase":{}}}}]},`+
		`"spec":{"nodeName":"node-%d","containers":[{"name":"web","image":"nginx:1.27"}]},"status":{"phase":%q}}`,
		name, ns, gen, len(name)%3, phase)
}
