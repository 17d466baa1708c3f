package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/store"
)

// errAskedToFail is what reconciling a pod labelled fail=true returns.
var errAskedToFail = errors.New("pod is labelled fail=true")

// tally is the controller's reconciler. Its "world" is a count of pods per
// namespace and phase, which it brings in line with the informer's cache
// one key at a time. Workers call it concurrently, for different keys.
type tally struct {
	pods *listwatch.Lister

	mu     sync.Mutex
	phase  map[string]string         // key → phase counted for it
	counts map[string]map[string]int // namespace → phase → pods
}

func newTally(pods *listwatch.Lister) *tally {
	return &tally{pods: pods, phase: map[string]string{}, counts: map[string]map[string]int{}}
}

// reconcile counts the object of key as the cache now holds it (or no
// longer counts it, once gone), describes the result, and returns the
// resourceVersion it saw ("-" once gone). Objects without status.phase
// (configmaps) count as Unknown.
func (t *tally) reconcile(ctx context.Context, key string) (result, rv string, err error) {
	ns, name, err := store.SplitKey(key)
	if err != nil {
		return "", "-", fmt.Errorf("reconcile %q: %w", key, err)
	}
	pod, err := t.pods.Get(ns, name)
	if err != nil && !httpwatch.IsNotFound(err) {
		return "", "-", fmt.Errorf("reconcile %q: %w", key, err)
	}
	phase, rv := "", "-"
	if err == nil {
		if v, _ := pod.Label("fail"); v == "true" {
			return "", pod.ResourceVersion(), errAskedToFail
		}
		phase, rv = pod.Get("status.phase").String(), pod.ResourceVersion()
		if phase == "" {
			phase = "Unknown"
		}
	}
	// Check the context just before changing the world: with shards, it
	// ends when the key moves to another replica.
	if err := ctx.Err(); err != nil {
		return "", rv, fmt.Errorf("reconcile %q: %w", key, err)
	}
	if phase == "" {
		return "deleted " + t.set(key, ns, ""), rv, nil
	}
	return phase + " " + t.set(key, ns, phase), rv, nil
}

// cached reports whether the informer's cache holds key.
func (t *tally) cached(key string) bool {
	ns, name, err := store.SplitKey(key)
	if err != nil {
		return false
	}
	_, err = t.pods.Get(ns, name)
	return err == nil
}

// forget stops counting key: it is another replica's now.
func (t *tally) forget(key string) {
	if ns, _, err := store.SplitKey(key); err == nil {
		t.set(key, ns, "")
	}
}

// set records phase for key ("" forgets it) and returns the namespace's
// counts afterwards, e.g. "(shop: Pending=1 Running=4)".
func (t *tally) set(key, ns, phase string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.phase[key]; ok {
		t.counts[ns][old]--
		if t.counts[ns][old] == 0 {
			delete(t.counts[ns], old)
		}
		delete(t.phase, key)
	}
	if phase != "" {
		if t.counts[ns] == nil {
			t.counts[ns] = map[string]int{}
		}
		t.counts[ns][phase]++
		t.phase[key] = phase
	}
	return "(" + ns + ": " + format(t.counts[ns]) + ")"
}

// summary returns one line per namespace with pods counted, sorted.
func (t *tally) summary() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lines []string
	for _, ns := range slices.Sorted(maps.Keys(t.counts)) {
		if len(t.counts[ns]) > 0 {
			lines = append(lines, ns+": "+format(t.counts[ns]))
		}
	}
	return lines
}

func format(byPhase map[string]int) string {
	if len(byPhase) == 0 {
		return "no pods"
	}
	var b strings.Builder
	for i, p := range slices.Sorted(maps.Keys(byPhase)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", p, byPhase[p])
	}
	return b.String()
}
