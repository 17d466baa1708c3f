package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/listwatch/listwatch/examples/internal/demo"
)

// The embedded server's world: demoCount pods over three namespaces and
// three nodes, pod i on node-(i%3+1); demoNode is the node watched by default.
const (
	demoCount = 30
	demoNode  = "node-1"
)

// demoServer starts the embedded demo server, its pods churning until ctx
// is done, and makes demoNode the node watched unless one was named.
func demoServer(ctx context.Context) (string, func(), error) {
	if node == "" {
		node = demoNode
	}
	return (&demo.OnDemand{Pods: demoPods(), Setup: func(s *demo.Server) error { churn(ctx, s); return nil }}).Start(ctx)
}

// demoPods returns the pods the embedded server starts with.
func demoPods() []demo.Pod {
	pods := make([]demo.Pod, demoCount)
	for i := range pods {
		pods[i] = demoPod(i)
	}
	return pods
}

// churn restarts containers, changes phases, adds and deletes demo pods a
// few times a second until ctx is done.
func churn(ctx context.Context, s *demo.Server) {
	rnd := rand.New(rand.NewPCG(3, 4))
	pods := demoPods()
	s.Churn(ctx, 300*time.Millisecond, func() error {
		i := rnd.IntN(len(pods))
		switch rnd.IntN(10) {
		case 0:
			return s.DeletePod(pods[i].Namespace, pods[i].Name)
		case 1:
			p := demoPod(len(pods))
			p.Phase, p.Containers, p.Restarts = "Pending", 1+rnd.IntN(3), 0
			pods = append(pods, p)
			return s.CreatePod(p)
		case 2, 3, 4:
			pods[i].Restarts++
		default:
			pods[i].Phase = demo.Phases[rnd.IntN(len(demo.Phases))]
		}
		return s.UpdatePod(pods[i])
	})
}

// demoPod is pod i as the demo starts it, with managedFields for the agent
// to drop: phases cycle every three pods, odd pods have two containers, and
// the first container has restarted i%4 times.
func demoPod(i int) demo.Pod {
	ns, node := demo.Place(i)
	return demo.Pod{
		Namespace: ns, Name: fmt.Sprintf("app-%02d", i), Node: node,
		Labels:     map[string]string{"app": "demo"},
		Phase:      demo.Phases[i/3%len(demo.Phases)],
		Containers: 1 + i%2,
		Restarts:   i % 4,
		Manager:    "kubelet",
	}
}
