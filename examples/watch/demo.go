package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/listwatch/listwatch/examples/internal/demo"
	"github.com/listwatch/listwatch/watchtest"
)

const demoCount = 30

// startDemo starts an embedded API server holding demo pods, all running,
// and a config map per namespace, and keeps changing the pods until ctx is
// done.
func startDemo(ctx context.Context) (host string, closeFn func(), err error) {
	pods := make([]demo.Pod, demoCount)
	for i := range pods {
		pods[i] = demoPod(i, "Running", 0)
	}
	s, err := demo.NewServer(pods...)
	if err != nil {
		return "", nil, err
	}
	for _, ns := range demo.Namespaces {
		if _, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":"settings","namespace":%q},"data":{"replicas":"3"}}`, ns)); err != nil {
			s.Close()
			return "", nil, fmt.Errorf("demo server: %w", err)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	next, gen := demoCount, 0
	s.Churn(ctx, 400*time.Millisecond, func() error {
		gen++
		i := rnd.IntN(next)
		switch rnd.IntN(10) {
		case 0:
			p := demoPod(i, "", gen)
			return s.DeletePod(p.Namespace, p.Name)
		case 1:
			next++
			return s.CreatePod(demoPod(next-1, "Pending", gen))
		default:
			return s.UpdatePod(demoPod(i, demo.Phases[rnd.IntN(len(demo.Phases))], gen))
		}
	})
	return s.URL, s.Close, nil
}

// demoPod is pod number i; gen counts the demo's changes, as a label.
func demoPod(i int, phase string, gen int) demo.Pod {
	ns, node := demo.Place(i)
	return demo.Pod{
		Namespace: ns, Name: fmt.Sprintf("web-%02d", i), Node: node, Phase: phase,
		Labels:  map[string]string{"app": "web", "generation": strconv.Itoa(gen)},
		Manager: "demo",
	}
}
