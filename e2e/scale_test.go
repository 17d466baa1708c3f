package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// Short lease durations for the scale-out tests: LeaseDuration,
// RenewDeadline, RetryPeriod.
const scaleLease, scaleRenew, scaleRetry = 4 * time.Second, 3 * time.Second, time.Second

// controllerBinary builds examples/tally once into a temporary
// directory and returns its path.
func controllerBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "controller")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/listwatch/listwatch/examples/tally")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// replica is one controller process and what it printed, line by line.
type replica struct {
	id  string
	cmd *exec.Cmd

	mu     sync.Mutex
	stdout []string
	stderr []string
	done   chan struct{}
	killed time.Time
}

// startReplica runs the controller against the real server with args,
// identity id; it is killed when the test ends.
func startReplica(t *testing.T, bin, id string, args ...string) *replica {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(realapi.Env(t, "REALAPI_TOKEN")), 0o600))
	all := append([]string{"--server", realapi.Env(t, "REALAPI_URL"), "--token-file", tokenFile,
		"--ca", realapi.Env(t, "REALAPI_CA"), "--identity", id, "--spans", "--resource", "configmaps",
		"--lease-duration", scaleLease.String(), "--renew-deadline", scaleRenew.String(),
		"--retry-period", scaleRetry.String()}, args...)
	r := &replica{id: id, cmd: exec.Command(bin, all...), done: make(chan struct{})}
	out, err := r.cmd.StdoutPipe()
	require.NoError(t, err)
	errOut, err := r.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, r.cmd.Start())
	var readers sync.WaitGroup
	readers.Go(func() { r.collect(out, &r.stdout) })
	readers.Go(func() { r.collect(errOut, &r.stderr) })
	go func() { readers.Wait(); _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		testwait.RecvWithin(t, r.done, wait, r.id+" to be gone after SIGKILL")
		if t.Failed() {
			t.Logf("%s stderr:\n%s", id, strings.Join(r.lines(true), "\n"))
		}
	})
	return r
}

func (r *replica) collect(rd io.Reader, into *[]string) {
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		r.mu.Lock()
		*into = append(*into, sc.Text())
		r.mu.Unlock()
	}
}

func (r *replica) lines(stderr bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if stderr {
		return slices.Clone(r.stderr)
	}
	return slices.Clone(r.stdout)
}

// kill sends SIGKILL and waits for the process to be gone.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	r.killed = time.Now()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGKILL))
	testwait.RecvWithin(t, r.done, wait, r.id+" to be gone after SIGKILL")
}

// terminate sends SIGTERM and waits for a clean exit.
func (r *replica) terminate(t *testing.T) {
	t.Helper()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-r.done:
	case <-time.After(wait):
		t.Fatalf("%s did not exit on SIGTERM", r.id)
	}
}

// waitLine waits for a stderr line matching re and returns its submatches.
func (r *replica) waitLine(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	require.Eventually(t, func() bool {
		for _, l := range r.lines(true) {
			if m = re.FindStringSubmatch(l); m != nil {
				return true
			}
		}
		return false
	}, wait, 20*time.Millisecond, "%s never printed %s", r.id, re)
	return m
}

// span is one reconcile a replica printed.
type span struct {
	id, key, rv string
	start, end  time.Time
}

func (r *replica) spans() []span {
	var out []span
	for _, l := range r.lines(false) {
		f := strings.Fields(l)
		if len(f) != 7 || f[0] != "span" {
			continue
		}
		s, _ := strconv.ParseInt(f[4], 10, 64)
		e, _ := strconv.ParseInt(f[5], 10, 64)
		out = append(out, span{id: f[1], key: f[2], rv: f[3], start: time.UnixMicro(s), end: time.UnixMicro(e)})
	}
	return out
}

func allSpans(rs []*replica) []span {
	var out []span
	for _, r := range rs {
		out = append(out, r.spans()...)
	}
	return out
}

// noOverlap checks that no key was reconciled by two replicas at once.
func noOverlap(t *testing.T, spans []span) {
	t.Helper()
	byKey := map[string][]span{}
	for _, s := range spans {
		byKey[s.key] = append(byKey[s.key], s)
	}
	for key, ss := range byKey {
		for i, a := range ss {
			for _, b := range ss[i+1:] {
				if a.id != b.id && a.start.Before(b.end) && b.start.Before(a.end) {
					t.Errorf("%s reconciled by %s and %s at once", key, a.id, b.id)
				}
			}
		}
	}
}

func micros(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.UnixMicro(n)
}

// Three replicas with --leader-elect: one leads and reconciles; SIGKILL
// it, and another leads and reconciles within LeaseDuration +
// (1+JitterFactor)·RetryPeriod; leadership intervals never overlap, and
// every reconcile happened inside its replica's leadership.
func TestControllerLeaderElectionFailover(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	for i := range 5 {
		_, err := cms.Create(context.Background(), configMap(ns, fmt.Sprintf("cm-%d", i), "1"))
		require.NoError(t, err)
	}
	bin := controllerBinary(t)
	var rs []*replica
	for _, id := range []string{"l1", "l2", "l3"} {
		rs = append(rs, startReplica(t, bin, id, "--leader-elect", "-n", ns, "--lease-namespace", ns))
	}
	leading := regexp.MustCompile(`^leading: (\S+) since (\d+)$`)
	first := waitLeader(t, rs, leading, nil)
	first.kill(t)
	second := waitLeader(t, rs, leading, first)
	since := micros(second.waitLine(t, leading)[2])
	handover := since.Sub(first.killed)
	acted := firstSpanAfter(t, second, since).Sub(first.killed)
	t.Logf("leader %s killed; %s leads after %v and reconciles after %v", first.id, second.id, handover, acted)
	assert.Less(t, handover, scaleLease+2200*time.Millisecond+time.Second)

	for _, r := range rs {
		if r != first {
			r.terminate(t)
		}
	}
	type term struct {
		id         string
		start, end time.Time
	}
	var terms []term
	for _, r := range rs {
		var cur *term
		for _, l := range r.lines(true) {
			if m := leading.FindStringSubmatch(l); m != nil {
				cur = &term{id: r.id, start: micros(m[2])}
			}
			if m := regexp.MustCompile(`^stopped leading: \S+ at (\d+)$`).FindStringSubmatch(l); m != nil && cur != nil {
				cur.end = micros(m[1])
				terms = append(terms, *cur)
				cur = nil
			}
		}
		if cur != nil {
			cur.end = r.killed
			require.False(t, cur.end.IsZero(), "%s never stopped leading", r.id)
			terms = append(terms, *cur)
		}
		for _, s := range r.spans() {
			inside := false
			for _, tm := range terms {
				inside = inside || (tm.id == r.id && !s.start.Before(tm.start) && !s.end.After(tm.end))
			}
			assert.True(t, inside, "%s reconciled %s outside its leadership", r.id, s.key)
		}
	}
	require.GreaterOrEqual(t, len(terms), 2)
	for i, a := range terms {
		for _, b := range terms[i+1:] {
			assert.False(t, a.start.Before(b.end) && b.start.Before(a.end), "%s and %s led at once", a.id, b.id)
		}
	}
}

// waitLeader waits for a replica other than not to print leading.
func waitLeader(t *testing.T, rs []*replica, leading *regexp.Regexp, not *replica) *replica {
	t.Helper()
	var found *replica
	require.Eventually(t, func() bool {
		for _, r := range rs {
			if r == not {
				continue
			}
			for _, l := range r.lines(true) {
				if leading.MatchString(l) {
					found = r
					return true
				}
			}
		}
		return false
	}, wait, 20*time.Millisecond)
	return found
}

func firstSpanAfter(t *testing.T, r *replica, since time.Time) time.Time {
	t.Helper()
	var at time.Time
	require.Eventually(t, func() bool {
		for _, s := range r.spans() {
			if !s.start.Before(since) {
				at = s.start
				return true
			}
		}
		return false
	}, wait, 20*time.Millisecond)
	return at
}

// writeAll creates (or, with update, changes) the configmaps cm-0000…
// concurrently and returns key → the resourceVersion written.
func writeAll(t *testing.T, cms *httpwatch.ResourceClient, ns string, n int, value string, update bool) map[string]string {
	t.Helper()
	var mu sync.Mutex
	rvs := map[string]string{}
	next := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("cm-%04d", i)
				var o *raw.Object
				var err error
				if update {
					o, err = cms.Update(context.Background(), configMap(ns, name, value))
				} else {
					o, err = cms.Create(context.Background(), configMap(ns, name, value))
				}
				if !assert.NoError(t, err, name) {
					continue
				}
				mu.Lock()
				rvs[ns+"/"+name] = o.ResourceVersion()
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	testwait.GroupWithin(t, &wg, wait, "the writers")
	require.Len(t, rvs, n)
	return rvs
}

// reconciledOnce waits until every key in want was reconciled at its
// resourceVersion, and checks that each was reconciled exactly once, by
// its owner among members. It returns when each was reconciled.
func reconciledOnce(t *testing.T, rs []*replica, want map[string]string, members []string) map[string]span {
	t.Helper()
	got := map[string][]span{}
	require.Eventually(t, func() bool {
		got = map[string][]span{}
		for _, s := range allSpans(rs) {
			if want[s.key] == s.rv {
				got[s.key] = append(got[s.key], s)
			}
		}
		return len(got) == len(want)
	}, wait, 100*time.Millisecond, "not every change was reconciled")
	out := map[string]span{}
	for key, ss := range got {
		if assert.Len(t, ss, 1, "%s@%s reconciled %d times", key, want[key], len(ss)) {
			assert.Equal(t, shard.Owner(key, members), ss[0].id, "%s reconciled by its owner", key)
		}
		out[key] = ss[0]
	}
	return out
}

// Three replicas with --shards 3 over 3,000 configmaps: each creation is
// reconciled exactly once, by the key's rendezvous owner; SIGKILL one, and
// each of its keys is reconciled once more, by its new owner, within
// LeaseDuration + RetryPeriod (and nothing else moves); then a change of
// every configmap is reconciled exactly once, by the two left. No key is
// ever reconciled by two replicas at once.
// Decision 18.
func TestControllerShardsHandOverExactlyOnce(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	bin := controllerBinary(t)
	ids := []string{"s1", "s2", "s3"}
	var rs []*replica
	for _, id := range ids {
		rs = append(rs, startReplica(t, bin, id, "--shards", "3", "-n", ns, "--lease-namespace", ns, "--workers", "4"))
	}
	all := regexp.MustCompile(`^members: s1,s2,s3 at \d+$`)
	synced := regexp.MustCompile(`^synced \d+ configmaps`)
	for _, r := range rs {
		r.waitLine(t, all)
		r.waitLine(t, synced)
	}

	const n = 3000
	began := time.Now()
	created := writeAll(t, cms, ns, n, "1", false)
	t.Logf("3000 configmaps created in %v", time.Since(began))
	reconciledOnce(t, rs, created, ids)
	t.Logf("3000 creations reconciled in %v", time.Since(began))

	dead := rs[2]
	before := len(allSpans(rs))
	dead.kill(t)
	survivors, left := rs[:2], ids[:2]
	moved := map[string]string{}
	for key, rv := range created {
		if shard.Owner(key, ids) == dead.id {
			moved[key] = rv
		}
	}
	handed := reconciledOnce(t, survivors, moved, left)
	var first, last time.Duration
	for _, s := range handed {
		d := s.start.Sub(dead.killed)
		if first == 0 || d < first {
			first = d
		}
		last = max(last, d)
	}
	t.Logf("%d keys of %s moved: first reconciled %v after SIGKILL, last %v", len(moved), dead.id, first, last)
	// The slack is for the requests after expiry (evict, publish, list,
	// relist) on a busy machine.
	assert.Less(t, last, scaleLease+scaleRetry+3*time.Second, "moved within LeaseDuration + RetryPeriod")
	extra := len(allSpans(rs)) - before - len(moved)
	assert.Zero(t, extra, "only the dead replica's keys were reconciled again")

	began = time.Now()
	changed := writeAll(t, cms, ns, n, "2", true)
	reconciledOnce(t, survivors, changed, left)
	t.Logf("3000 changes reconciled by two replicas in %v", time.Since(began))

	for _, r := range survivors {
		r.terminate(t)
	}
	spans := allSpans(rs)
	noOverlap(t, spans)
	assert.Len(t, spans, 2*n+len(moved), "no reconcile beyond one per change and one per moved key")
}
