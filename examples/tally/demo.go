package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/listwatch/listwatch/examples/internal/demo"
)

// The embedded server's world: demoCount pods, of which those numbered in
// demoFailing carry the label fail=true.
var demoFailing = []int{5, 16, 27}

const demoCount = 30

// demoPods returns the pods the embedded server starts with.
func demoPods() []demo.Pod {
	pods := make([]demo.Pod, demoCount)
	for i := range pods {
		pods[i] = demoPod(i, demo.Phases[i/len(demo.Namespaces)%len(demo.Phases)])
	}
	return pods
}

// churn updates, adds and deletes demo pods a few times a second until ctx
// is done. It never deletes a failing pod, so their retries always show.
func churn(ctx context.Context, s *demo.Server) {
	rnd := rand.New(rand.NewPCG(1, 2))
	next := demoCount
	s.Churn(ctx, 300*time.Millisecond, func() error {
		i := rnd.IntN(next)
		switch rnd.IntN(10) {
		case 0:
			if slices.Contains(demoFailing, i) {
				return nil
			}
			return s.DeletePod(demoKey(i))
		case 1:
			next++
			return s.CreatePod(demoPod(next-1, "Pending"))
		default:
			return s.UpdatePod(demoPod(i, demo.Phases[rnd.IntN(len(demo.Phases))]))
		}
	})
}

func demoKey(i int) (namespace, name string) {
	p := demoPod(i, "")
	return p.Namespace, p.Name
}

func demoPod(i int, phase string) demo.Pod {
	ns, node := demo.Place(i)
	return demo.Pod{
		Namespace: ns, Name: fmt.Sprintf("web-%02d", i), Node: node, Phase: phase,
		Labels: map[string]string{"app": "web", "fail": strconv.FormatBool(slices.Contains(demoFailing, i))},
	}
}
