package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// The served cache's proof (decision 43): a cacheserve.Server in the test
// process mirrors the configmaps and pods of one namespace of the real
// kube-apiserver, served on 127.0.0.1, and the same clients pointed at it
// and at kube-apiserver give the same answers.

var pods = httpwatch.Resource{Version: "v1", Resource: "pods"}

// servedCache is a cacheserve.Server mirroring a namespace's configmaps
// and pods of the real server, on a loopback port.
type servedCache struct {
	url    string
	client *httpwatch.Client // a client of the served endpoint
	hc     *http.Client
}

// loopbackOnly is the served cache's authorization: requests from this
// machine only, by their peer address (as examples/nodecache has it).
func loopbackOnly(req *http.Request) error {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("loopback only")
}

// serveNamespace serves ns's configmaps and pods, read from the real
// server through c, until the test ends, and waits for both to sync.
func serveNamespace(t *testing.T, c *httpwatch.Client, ns string) *servedCache {
	t.Helper()
	srv := &cacheserve.Server{Authorize: loopbackOnly, Version: realVersion(t)}
	ctx, cancel := context.WithCancel(context.Background())
	var done []chan struct{}
	var infs []*listwatch.Informer
	for _, r := range []httpwatch.Resource{configMaps, pods} {
		r.Namespace = ns
		rc := c.Resource(r)
		// Whole objects: kube-apiserver answers with managedFields, and a
		// cache without them would say so in a Warning kubectl prints.
		rc.KeepManagedFields = true
		inf := listwatch.NewInformer(rc, 0)
		inf.Reflector.Name = "served cache of " + r.Resource
		_, err := srv.Add(inf, rc, apiserve.APIResource{})
		require.NoError(t, err)
		d := make(chan struct{})
		go func() { defer close(d); inf.Run(ctx) }()
		done, infs = append(done, d), append(infs, inf)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		testwait.RecvWithin(t, served, wait, "the served cache's Serve to return")
		for _, d := range done {
			testwait.RecvWithin(t, d, wait, "the served cache's informers to stop")
		}
	})
	for _, inf := range infs {
		require.NoError(t, inf.Wait(ctxTimeout(t, wait)), "the served cache's informer did not sync")
	}
	sc := &servedCache{url: "http://" + l.Addr().String()}
	sc.client, err = httpwatch.NewClient(&kubeconfig.Config{Host: sc.url, QPS: -1, Timeout: 30 * time.Second})
	require.NoError(t, err)
	t.Cleanup(sc.client.CloseIdleConnections)
	sc.hc = &http.Client{Timeout: 30 * time.Second}
	t.Cleanup(sc.hc.CloseIdleConnections)
	return sc
}

// caughtUp waits until a list of each resource through the served cache
// is the real server's list: the cache has heard every write made.
func (sc *servedCache) caughtUp(t *testing.T, real *httpwatch.Client, ns string) {
	t.Helper()
	for _, r := range []httpwatch.Resource{configMaps, pods} {
		r.Namespace = ns
		var last string
		ok := assert.Eventually(t, func() bool {
			want, got := serverState(t, real.Resource(r)), serverState(t, sc.client.Resource(r))
			last = fmt.Sprintf("real %v\nserved %v", want, got)
			return fmt.Sprint(want) == fmt.Sprint(got)
		}, wait, 20*time.Millisecond)
		require.True(t, ok, "the served %s never caught up with the real server:\n%s", r.Resource, last)
	}
}

// fillServed creates the objects the comparisons read: configmaps with
// labels, and pods on two nodes and none.
func fillServed(t *testing.T, c *httpwatch.Client, ns string) {
	t.Helper()
	ctx := ctxTimeout(t, wait)
	cms := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	for _, cm := range []struct{ name, labels string }{
		{"c1", `{"tier":"gold","app":"a"}`}, {"c2", `{"tier":"gold"}`}, {"c3", `{"tier":"silver","app":"a"}`},
		{"c4", `{"tier":"bronze"}`}, {"c5", `{}`}, {"c6", `{"app":"b"}`},
	} {
		_, err := cms.Create(ctx, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":%s},"data":{"k":%q}}`, cm.name, cm.labels, cm.name))
		require.NoError(t, err)
	}
	ps := c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: ns})
	for _, p := range []struct{ name, node, labels string }{
		{"p1", "n1", `{"app":"a"}`}, {"p2", "n2", `{"app":"b"}`}, {"p3", "", `{"app":"a"}`},
	} {
		node := ""
		if p.node != "" {
			node = fmt.Sprintf(`"nodeName":%q,`, p.node)
		}
		_, err := ps.Create(ctx, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"labels":%s},"spec":{%s"containers":[{"name":"c","image":"busybox:1.36"}]}}`, p.name, p.labels, node))
		require.NoError(t, err)
	}
}

// serveStep is one kubectl command run against kube-apiserver and then
// the served cache. A watching step's trigger is run against the real
// server (the cache serves reads only) once the watch is established, and
// reset after it, so that both runs see the same change.
type serveStep struct {
	name           string
	args           []string
	trigger, reset []string
	lines          int
}

// servedKubectlSteps are the reads compared: each form of get, selectors,
// paging and watches.
func servedKubectlSteps() []serveStep {
	s := func(name string, args ...string) serveStep { return serveStep{name: name, args: args} }
	return []serveStep{
		s("version", "version"),
		s("get configmaps", "get", "configmaps"),
		s("get pods", "get", "pods"),
		s("get pods -o wide", "get", "pods", "-o", "wide"),
		s("get configmaps,pods", "get", "configmaps,pods"),
		s("get configmaps -o json", "get", "configmaps", "-o", "json"),
		s("get pods -o json", "get", "pods", "-o", "json"),
		s("get configmap -o json", "get", "configmap", "c1", "-o", "json"),
		s("get pod -o yaml", "get", "pod", "p1", "-o", "yaml"),
		s("get -o name", "get", "configmaps", "-o", "name"),
		s("get -o yaml, a list", "get", "configmaps", "-o", "yaml"),
		s("get -o custom-columns", "get", "pods", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,RV:.metadata.resourceVersion"),
		s("get --sort-by", "get", "configmaps", "--sort-by", ".metadata.labels.tier"),
		s("get -o wide -l", "get", "pods", "-o", "wide", "-l", "app=a"),
		s("get --show-labels", "get", "configmaps", "--show-labels"),
		s("get -l", "get", "configmaps", "-l", "tier=gold"),
		s("get -l set-based", "get", "configmaps", "-l", "tier in (gold,bronze),!app"),
		s("get -l none", "get", "configmaps", "-l", "tier=platinum"),
		s("get --field-selector name", "get", "configmaps", "--field-selector", "metadata.name=c2"),
		s("get --field-selector name!=", "get", "configmaps", "--field-selector", "metadata.name!=c2", "-o", "name"),
		s("get pods --field-selector node", "get", "pods", "--field-selector", "spec.nodeName=n1"),
		s("get pods --field-selector phase", "get", "pods", "--field-selector", "status.phase=Pending", "-o", "name"),
		s("get pods -l and --field-selector", "get", "pods", "-l", "app=a", "--field-selector", "spec.nodeName!=n1"),
		s("get --chunk-size", "get", "configmaps", "--chunk-size=2"),
		s("get --chunk-size -o json", "get", "pods", "--chunk-size=1", "-o", "json"),
		s("get missing", "get", "configmap", "missing"),
		s("get missing, ignored", "get", "configmap", "missing", "--ignore-not-found"),
		s("get -o jsonpath", "get", "configmaps", "-o", "jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}"),
		{name: "get -w", args: []string{"get", "configmaps", "-w"},
			trigger: []string{"label", "configmap", "c5", "seen=yes"}, reset: []string{"label", "configmap", "c5", "seen-"}, lines: 8},
		{name: "get -w -l, entering", args: []string{"get", "configmaps", "-l", "tier=gold", "-w"},
			trigger: []string{"label", "configmap", "c3", "tier=gold", "--overwrite"}, reset: []string{"label", "configmap", "c3", "tier=silver", "--overwrite"}, lines: 4},
		{name: "get -w --output-watch-events", args: []string{"get", "configmaps", "-l", "tier=bronze", "-w", "--output-watch-events"},
			trigger: []string{"label", "configmap", "c4", "tier=silver", "--overwrite"}, reset: []string{"label", "configmap", "c4", "tier=bronze", "--overwrite"}, lines: 3},
		{name: "get -w -l, leaving", args: []string{"get", "configmaps", "-l", "tier=gold", "--watch-only", "-o", "name"},
			trigger: []string{"label", "configmap", "c2", "tier=silver", "--overwrite"}, reset: []string{"label", "configmap", "c2", "tier=gold", "--overwrite"}, lines: 1},
		{name: "get pods -w --field-selector", args: []string{"get", "pods", "--field-selector", "spec.nodeName=n1", "--watch-only"},
			trigger: []string{"label", "pod", "p1", "seen=yes"}, reset: []string{"label", "pod", "p1", "seen-"}, lines: 2},
		// The versions each run sees differ (the first run's trigger and
		// reset come before the second's), so not printed here.
		{name: "get -w -o jsonpath", args: []string{"get", "configmap", "c6", "-w", "-o", `jsonpath={.metadata.name} {.metadata.annotations.note}{"\n"}`},
			trigger: []string{"annotate", "configmap", "c6", "note=hi"}, reset: []string{"annotate", "configmap", "c6", "note-"}, lines: 2},
	}
}

// Decision 43: an unmodified kubectl 1.37.2 prints the same, and exits
// the same, against a served cache of the real server as against the
// real server, for every form of get: tables, -o json/yaml/name/jsonpath,
// label and field selectors, --chunk-size and -w. Nothing is masked but
// ages (the AGE column) and the padding their width sets: the objects,
// their uids, times and resourceVersions are the same objects.
func TestServedCacheKubectlMatchesRealServer(t *testing.T) {
	kubectl := realapi.Env(t, "REALAPI_KUBECTL")
	cfg := config(t)
	c := client(t)
	ns := namespace(t, c)
	fillServed(t, c, ns)
	sc := serveNamespace(t, c, ns)

	dir := t.TempDir()
	real := newKubectlTarget(t, "kube-apiserver", filepath.Join(dir, "real"), ns, cfg.Host, cfg.CAFile, cfg.BearerToken)
	served := newKubectlTarget(t, "served cache", filepath.Join(dir, "served"), ns, sc.url, "", "")

	var table strings.Builder
	table.WriteString("| # | command | result |\n|---|---|---|\n")
	same := 0
	steps := servedKubectlSteps()
	for i, st := range steps {
		sc.caughtUp(t, c, ns)
		want := runServed(t, kubectl, real, real, st)
		sc.caughtUp(t, c, ns)
		got := runServed(t, kubectl, served, real, st)
		result := "identical"
		if want.code == got.code && want.stdout == got.stdout && want.stderr == got.stderr {
			same++
		} else {
			result = "differs"
			t.Errorf("%s: kubectl %s\nkube-apiserver:\n%s\nserved cache:\n%s", st.name, strings.Join(st.args, " "), want, got)
		}
		fmt.Fprintf(&table, "| %d | `kubectl %s` | %s |\n", i+1, strings.Join(st.args, " "), result)
	}
	t.Logf("kubectl: %d of %d commands identical on the served cache\n%s", same, len(steps), table.String())
}

// agesOnly masks what differs between two reads of the same objects a
// moment apart: ages in tables, and the column padding their width sets.
func agesOnly(s string) string {
	for range 2 { // adjacent ages share their spaces
		s = maskAge.ReplaceAllString(s, "${1}AGE${4}")
	}
	return maskSpaces.ReplaceAllString(s, "  ")
}

// runServed runs st on k, its output masked by agesOnly; a watching
// step's trigger and reset run on writer, the real server.
func runServed(t *testing.T, kubectl string, k, writer kubectlTarget, st serveStep) kubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if st.trigger != nil {
		return runServedWatch(t, ctx, kubectl, k, writer, st)
	}
	cmd := k.command(ctx, kubectl, st.args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%s on %s did not end within %s", st.name, k.name, wait)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return kubectlResult{code: code, stdout: agesOnly(stdout.String()), stderr: agesOnly(stderr.String())}
}

// runServedWatch runs a watching step: once k's watch is established (seen
// in its -v=6 log), the trigger changes the real server; the command ends
// once it has printed st.lines lines, and the reset undoes the change.
func runServedWatch(t *testing.T, ctx context.Context, kubectl string, k, writer kubectlTarget, st serveStep) kubectlResult {
	t.Helper()
	out := watchLines(t, ctx, k.command(ctx, kubectl, append(st.args, "-v=6")...), st.name+" on "+k.name, st.lines, func() {
		trig := runServed(t, kubectl, writer, writer, serveStep{name: st.name + " (trigger)", args: st.trigger})
		require.Zero(t, trig.code, "the trigger of %s on %s: %s", st.name, k.name, trig)
	})
	reset := runServed(t, kubectl, writer, writer, serveStep{name: st.name + " (reset)", args: st.reset})
	require.Zero(t, reset.code, "the reset of %s on %s: %s", st.name, k.name, reset)
	return kubectlResult{stdout: agesOnly(out)}
}
