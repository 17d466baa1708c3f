package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/listwatch/listwatch/httpwatch/watchtest"
)

// The embedded server's world: demoPods pods spread over demoNamespaces,
// of which those numbered in demoFailing carry the label fail=true.
var (
	demoNamespaces = []string{"shop", "billing", "search"}
	demoFailing    = []int{5, 16, 27}
	demoPhases     = []string{"Pending", "Running", "Succeeded"}
)

const demoPods = 30

// startDemo starts an embedded API server holding the demo pods.
func startDemo() (*watchtest.Server, error) {
	s := watchtest.NewUnstartedServer()
	s.BookmarkInterval = 10 * time.Second
	s.Start()
	for i := range demoPods {
		ns, name := demoKey(i)
		if _, err := s.Create(watchtest.Pods, demoPod(ns, name, demoPhases[i/len(demoNamespaces)%len(demoPhases)], i)); err != nil {
			s.Close()
			return nil, fmt.Errorf("demo server: %w", err)
		}
	}
	return s, nil
}

// churn updates, adds and deletes demo pods a few times a second until ctx
// is done. It never deletes a failing pod, so their retries always show.
func churn(ctx context.Context, s *watchtest.Server) {
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	rnd := rand.New(rand.NewPCG(1, 2))
	next := demoPods
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		i := rnd.IntN(next)
		ns, name := demoKey(i)
		var err error
		switch rnd.IntN(10) {
		case 0:
			if !slices.Contains(demoFailing, i) {
				_, err = s.Delete(watchtest.Pods, ns, name)
			}
		case 1:
			ns, name = demoKey(next)
			_, err = s.Create(watchtest.Pods, demoPod(ns, name, "Pending", next))
			next++
		default:
			_, err = s.Update(watchtest.Pods, demoPod(ns, name, demoPhases[rnd.IntN(len(demoPhases))], i))
		}
		_ = err // a pod deleted earlier cannot be updated: the demo just moves on
	}
}

func demoKey(i int) (namespace, name string) {
	return demoNamespaces[i%len(demoNamespaces)], fmt.Sprintf("web-%02d", i)
}

func demoPod(ns, name, phase string, i int) string {
	fail := slices.Contains(demoFailing, i)
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q,"labels":{"app":"web","fail":"%t"}},`+
		`"spec":{"nodeName":"node-%d","containers":[{"name":"web","image":"nginx:1.27"}]},"status":{"phase":%q}}`,
		name, ns, fail, i%3, phase)
}
