package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/watchtest"
)

// The differential suite's reads: the same requests to kube-apiserver and
// to watchtest — gets, lists with every selector form and paging, watches
// from every resourceVersion form, discovery and errors, with the writes
// that set them up — compared as TestWatchtestWritesMatchRealServer
// compares writes (decision 7). Every difference left is listed
// in watchtest's package doc.

const (
	v2Accept      = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
	v2beta1Accept = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)

var (
	listNames   = []string{"kind", "apiVersion", "items.#.metadata.name"}
	eventFields = []string{"#.type", "#.object.metadata.name", "#.object.metadata.labels"}
)

func q(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}

func step(name, method, path string, same []string) diffStep {
	return diffStep{writeStep: writeStep{name: name, method: method, path: path, same: same}}
}

func saving(st diffStep, save map[string]string) diffStep {
	st.save = save
	return st
}

// TestWatchtestReadsMatchRealServer is the differential suite's reads
// (decision 7).
func TestWatchtestReadsMatchRealServer(t *testing.T) {
	cfg := config(t)
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	ns := namespace(t, client(t))
	fake := watchtest.NewServer()
	defer fake.Close()
	_, err = fake.Create(watchtest.Namespaces, `{"metadata":{"name":"`+ns+`"}}`)
	require.NoError(t, err)
	servers := []rawServer{{"real", cfg.Host, &http.Client{Transport: rt, Timeout: 20 * time.Second}, map[string]string{}}, {"watchtest", fake.URL, fake.Client(), map[string]string{}}}

	cms := "/api/v1/namespaces/NS/configmaps"
	pods := "/api/v1/namespaces/NS/pods"
	deps := "/apis/apps/v1/namespaces/NS/deployments"
	var steps []diffStep
	add := func(s ...diffStep) { steps = append(steps, s...) }
	create := func(path, name, body string) {
		add(diffStep{writeStep: writeStep{"create " + name, "POST", path, "application/json", body, []string{"metadata.name", "metadata.labels", "data"}}})
	}
	for _, c := range []struct{ name, labels string }{
		{"c1", `{"app":"a","tier":"web"}`}, {"c2", `{"app":"a","tier":"db"}`}, {"c3", `{"app":"b","tier":"web"}`},
		{"c4", `{"app":"b"}`}, {"c5", `{}`}, {"c6", `{"env":"prod","app":"c"}`},
	} {
		create(cms, c.name, `{"metadata":{"name":"`+c.name+`","labels":`+c.labels+`},"data":{"k":"`+c.name+`"}}`)
	}
	pod := func(name, node, policy, labels string) string {
		if node != "" {
			node = `"nodeName":"` + node + `",`
		}
		return `{"metadata":{"name":"` + name + `","labels":` + labels + `},"spec":{` + node + `"restartPolicy":"` + policy +
			`","schedulerName":"default-scheduler","containers":[{"name":"c","image":"x"}]}}`
	}
	create(pods, "p1", pod("p1", "n1", "Always", `{"app":"a"}`))
	create(pods, "p2", pod("p2", "n2", "Always", `{"app":"b"}`))
	create(pods, "p3", pod("p3", "", "Never", `{"app":"a"}`))
	create(pods, "p4", `{"metadata":{"name":"p4"},"spec":{"containers":[{"name":"c","image":"x"}]}}`)
	create(deps, "d1", `{"metadata":{"name":"d1","labels":{"app":"a"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`)

	// Reads of one object, and the paths that address none.
	for _, n := range []string{"c1", "c2", "c3", "c4", "c5", "c6"} {
		add(step("get "+n, "GET", cms+"/"+n, []string{"kind", "apiVersion", "metadata.name", "metadata.namespace", "metadata.labels", "data"}))
	}
	for _, n := range []string{"p1", "p2", "p3"} {
		add(step("get "+n, "GET", pods+"/"+n, []string{"kind", "metadata.name", "spec.nodeName", "spec.restartPolicy"}))
	}
	add(step("get d1", "GET", deps+"/d1", []string{"kind", "apiVersion", "metadata.name", "spec.replicas", "metadata.generation"}),
		step("get missing", "GET", cms+"/nope", statusFields),
		step("get missing pod", "GET", pods+"/nope", statusFields),
		step("get missing deployment", "GET", deps+"/nope", statusFields),
		step("get without a namespace", "GET", "/api/v1/configmaps/c1", statusFields),
		step("misspelt resource", "GET", "/api/v1/namespaces/NS/configmap/c1", statusFields),
		step("misspelt collection", "GET", "/api/v1/namespaces/NS/configmap", statusFields),
		step("unknown version", "GET", "/apis/apps/v2/namespaces/NS/deployments", statusFields),
		step("unknown core version", "GET", "/api/v2/namespaces/NS/configmaps", statusFields),
		step("unknown subresource", "GET", cms+"/c1/bogus", statusFields),
		step("no status subresource", "GET", cms+"/c1/status", statusFields),
		step("cluster-scoped under a namespace", "GET", "/api/v1/namespaces/NS/namespaces/x", statusFields),
		step("post to an object", "POST", cms+"/c1", statusFields),
		step("put to a collection", "PUT", cms, statusFields),
		step("pod status", "GET", pods+"/p1/status", []string{"kind", "metadata.name"}),
		step("deployment scale", "GET", deps+"/d1/scale", []string{"kind", "apiVersion", "spec.replicas", "status.selector"}),
	)

	// Lists with every label selector form, plain and paged one by one.
	for _, sel := range []string{
		"app=a", "app==a", "app!=a", "app in (a,b)", "app notin (a)", "app", "!app", "app=a,tier=web",
		"app in (a),tier notin (db)", "tier!=web,app", "env=prod", "app in (c, a)", "app=", "app!=", "tier in (web),!env",
		"app>1", "app<1", "nope=x", "",
	} {
		add(step("list labelSelector="+sel, "GET", cms+q("labelSelector", sel), listNames),
			step("list limit=1 labelSelector="+sel, "GET", cms+q("labelSelector", sel, "limit", "1"), append([]string{"metadata.remainingItemCount"}, listNames...)))
	}
	for _, sel := range []string{
		"metadata.name=c1", "metadata.name==c1", "metadata.name!=c1", "metadata.namespace=NS", "metadata.name=c1,metadata.namespace=NS",
		"metadata.name=nope", "metadata.name!=c1,metadata.name!=c2", "metadata.namespace!=NS", "metadata.name=", "metadata.name=c1,",
	} {
		add(step("list fieldSelector="+sel, "GET", cms+q("fieldSelector", sel), listNames),
			step("list fieldSelector="+sel+" labelSelector=app", "GET", cms+q("fieldSelector", sel, "labelSelector", "app"), listNames))
	}
	for _, sel := range []string{
		"spec.nodeName=n1", "spec.nodeName!=n1", "spec.nodeName=", "spec.restartPolicy=Never", "spec.schedulerName=default-scheduler",
		"metadata.name=p2", "spec.nodeName=n1,metadata.name=p1", "spec.serviceAccountName=", "status.nominatedNodeName=",
		"spec.hostNetwork=false", "spec.hostNetwork=true", "status.phase=Pending", "status.phase!=Pending", "spec.restartPolicy=Always",
		"spec.schedulerName!=default-scheduler", "status.podIP=", "spec.nodeName=n2,status.phase=Pending",
	} {
		add(step("pods fieldSelector="+sel, "GET", pods+q("fieldSelector", sel), listNames))
	}
	add(step("deployments fieldSelector=metadata.name=d1", "GET", deps+q("fieldSelector", "metadata.name=d1"), listNames),
		step("namespaces fieldSelector=metadata.name=NS", "GET", "/api/v1/namespaces"+q("fieldSelector", "metadata.name=NS"), listNames))

	// Selectors the server refuses, on lists and on watches.
	type refused struct{ resource, key, sel string }
	for _, r := range []refused{
		{cms, "labelSelector", "a===b"}, {cms, "labelSelector", "a in (b"}, {cms, "labelSelector", "-a"},
		{cms, "labelSelector", "a in b"}, {cms, "labelSelector", "a,"}, {cms, "labelSelector", ",a"},
		{cms, "labelSelector", "a b"}, {cms, "labelSelector", "a notin"}, {cms, "labelSelector", "=="},
		{cms, "labelSelector", "a=(b)"}, {cms, "labelSelector", "!a=b"},
		{cms, "labelSelector", "/a"}, {cms, "labelSelector", "a/"}, {cms, "labelSelector", "example.com/a b"},
		{cms, "labelSelector", "zAZ09 b"}, {cms, "labelSelector", "a-b c"}, {cms, "labelSelector", "a_b c"},
		{cms, "labelSelector", "a.b c"}, {cms, "labelSelector", strings.Repeat("k", 63) + " b"},
		{cms, "labelSelector", strings.Repeat("k", 64)}, {cms, "labelSelector", strings.Repeat("k", 63) + "-"},
		{cms, "fieldSelector", "metadata.name=x,y"},
		{cms, "fieldSelector", "x"}, {cms, "fieldSelector", "metadata.uid=1"}, {cms, "fieldSelector", "data.k=v"},
		{cms, "fieldSelector", "metadata.name"}, {cms, "fieldSelector", "spec.nodeName=n1"},
		{pods, "fieldSelector", "spec.nodename=n1"}, {pods, "fieldSelector", "status.phase=Running,spec.nodename=n1"},
		{deps, "fieldSelector", "status.replicas=1"}, {"/api/v1/namespaces", "fieldSelector", "metadata.namespace=x"},
	} {
		add(step("list "+r.key+"="+r.sel, "GET", r.resource+q(r.key, r.sel), statusFields),
			step("watch "+r.key+"="+r.sel, "GET", r.resource+q(r.key, r.sel, "watch", "1", "timeoutSeconds", "1"), statusFields))
	}

	// Paging, and the resourceVersion forms of a list.
	page := append([]string{"metadata.remainingItemCount"}, listNames...)
	add(saving(step("list, saving its resourceVersion", "GET", cms, listNames), map[string]string{"RV0": "metadata.resourceVersion"}),
		saving(step("first page", "GET", cms+q("limit", "2"), page), map[string]string{"C1": "metadata.continue"}),
		saving(step("second page", "GET", cms+"?limit=2&continue={C1}", page), map[string]string{"C2": "metadata.continue"}),
		step("last page", "GET", cms+"?limit=2&continue={C2}", page),
		step("second page again", "GET", cms+"?limit=2&continue={C1}", page),
		step("the rest at once", "GET", cms+"?continue={C1}", page),
		step("continue with a resourceVersion", "GET", cms+"?limit=2&continue={C1}&resourceVersion={RV0}", statusFields),
		step("continue with a match", "GET", cms+"?limit=2&continue={C1}&resourceVersionMatch=NotOlderThan", statusFields),
		step("continue that is not base64", "GET", cms+"?continue=%21%21", statusFields),
		step("limit 0", "GET", cms+q("limit", "0"), page),
		step("limit larger than the list", "GET", cms+q("limit", "100"), page),
		step("limit and a selector", "GET", cms+q("limit", "1", "labelSelector", "app=a"), page),
		step("resourceVersion 0", "GET", cms+q("resourceVersion", "0"), listNames),
		step("exact resourceVersion", "GET", cms+"?resourceVersion={RV0}&resourceVersionMatch=Exact", listNames),
		step("exact, paged", "GET", cms+"?resourceVersion={RV0}&resourceVersionMatch=Exact&limit=3", page),
		step("not older than", "GET", cms+"?resourceVersion={RV0}&resourceVersionMatch=NotOlderThan", listNames),
		step("a resourceVersion alone", "GET", cms+"?resourceVersion={RV0}", listNames),
		step("a resourceVersion and a limit", "GET", cms+"?resourceVersion={RV0}&limit=4", page),
		step("exact at 0", "GET", cms+q("resourceVersion", "0", "resourceVersionMatch", "Exact"), statusFields),
		step("a match without a resourceVersion", "GET", cms+q("resourceVersionMatch", "Exact"), statusFields),
		step("an unknown match", "GET", cms+q("resourceVersion", "1", "resourceVersionMatch", "Bogus"), statusFields),
		step("a resourceVersion that is not a number", "GET", cms+q("resourceVersion", "abc"), statusFields),
		step("a watch from a resourceVersion that is not a number", "GET", cms+q("resourceVersion", "-1", "watch", "1", "timeoutSeconds", "1"), statusFields),
		step("a group nobody serves", "GET", "/apis/nosuch.example.com/v1/namespaces/NS/things", []string{"kind", "code"}),
		step("sendInitialEvents on a list", "GET", cms+q("sendInitialEvents", "true"), statusFields),
		step("pods paged", "GET", pods+q("limit", "2"), page),
		step("pods, a selector, paged", "GET", pods+q("limit", "1", "labelSelector", "app=a"), page),
		step("across namespaces, selected", "GET", "/api/v1/configmaps"+q("labelSelector", "app=a,tier")+"&fieldSelector=metadata.namespace%3DNS", listNames),
	)

	// Changes after RV0, then watches from every resourceVersion form.
	mergeStep := func(name, path, body string) diffStep {
		return diffStep{writeStep: writeStep{name, "PATCH", path, mergeCT, body, []string{"metadata.labels", "data"}}}
	}
	add(mergeStep("c1 leaves app=a", cms+"/c1", `{"metadata":{"labels":{"app":"z"}}}`),
		mergeStep("c4 joins app=a", cms+"/c4", `{"metadata":{"labels":{"app":"a"}}}`),
		mergeStep("c2 changes", cms+"/c2", `{"data":{"k":"changed"}}`),
		step("c5 deleted", "DELETE", cms+"/c5", []string{"kind", "status", "details.name"}),
		diffStep{writeStep: writeStep{"c7 created", "POST", cms, "application/json", `{"metadata":{"name":"c7","labels":{"app":"a"}}}`, []string{"metadata.labels"}}},
	)
	w := func(name, query string, same ...string) diffStep {
		return step("watch "+name, "GET", cms+query+"&watch=1&timeoutSeconds=1", append(same, eventFields...))
	}
	add(w("from now", "?resourceVersion={RV0}&labelSelector=nothing%3Dhere"),
		w("from unset", "?labelSelector=app"),
		w("from 0", "?resourceVersion=0&labelSelector=app%3Da"),
		w("from RV0", "?resourceVersion={RV0}"),
		w("from RV0, app=a", "?resourceVersion={RV0}&labelSelector=app%3Da"),
		w("from RV0, c2 by name", "?resourceVersion={RV0}&fieldSelector=metadata.name%3Dc2"),
		w("from RV0 with bookmarks", "?resourceVersion={RV0}&allowWatchBookmarks=true&labelSelector=tier"),
		w("streaming list", "?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", `#(type=="BOOKMARK").object.metadata.annotations`),
		w("streaming list from RV0", "?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion={RV0}&labelSelector=app%3Da", `#(type=="BOOKMARK").object.metadata.annotations`),
		w("streaming list without bookmarks", "?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dc3"),
		step("watch sendInitialEvents without a match", "GET", cms+q("watch", "1", "timeoutSeconds", "1", "sendInitialEvents", "true"), statusFields),
		step("watch a match without sendInitialEvents", "GET", cms+q("watch", "1", "timeoutSeconds", "1", "resourceVersionMatch", "NotOlderThan"), statusFields),
		step("watch an exact match", "GET", cms+q("watch", "1", "timeoutSeconds", "1", "sendInitialEvents", "true", "resourceVersionMatch", "Exact"), statusFields),
		step("watch with a continue", "GET", cms+"?watch=1&timeoutSeconds=1&continue={C1}", []string{"kind", "status", "reason", "code"}),
		step("watch pods on n1", "GET", pods+"?watch=1&timeoutSeconds=1&resourceVersion=0&fieldSelector=spec.nodeName%3Dn1", eventFields),
		step("watch one object", "GET", cms+"?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dc3", eventFields),
		step("list after the changes", "GET", cms, listNames),
		step("exact list at RV0 after the changes", "GET", cms+"?resourceVersion={RV0}&resourceVersionMatch=Exact", listNames),
		step("the second page of the old list still serves its snapshot", "GET", cms+"?limit=2&continue={C2}", page),
	)

	// Discovery.
	pods0 := `items.0.versions.0.resources.#(resource=="pods").`
	apps := `items.#(metadata.name=="apps").versions.0.resources.#(resource=="deployments").`
	add(
		diffStep{writeStep: writeStep{name: "aggregated /api", method: "GET", path: "/api", same: []string{"kind", "apiVersion", "items.0.metadata", "items.0.versions.#.version", "items.0.versions.0.freshness",
			pods0 + "verbs", pods0 + "scope", pods0 + "shortNames", pods0 + "categories", pods0 + "responseKind", pods0 + "singularResource", pods0 + `subresources.#(subresource=="status")`,
			`items.0.versions.0.resources.#(resource=="configmaps")`, `items.0.versions.0.resources.#(resource=="namespaces").verbs`}}, accept: v2Accept},
		diffStep{writeStep: writeStep{name: "aggregated /api, v2beta1", method: "GET", path: "/api", same: []string{"kind", "apiVersion", `items.0.versions.0.resources.#(resource=="configmaps")`}}, accept: v2beta1Accept},
		diffStep{writeStep: writeStep{name: "aggregated /apis", method: "GET", path: "/apis", same: []string{"kind", "apiVersion",
			`items.#(metadata.name=="apps").versions.#.version`, apps + "verbs", apps + "scope", apps + "shortNames", apps + "categories", apps + "subresources", apps + "responseKind"}}, accept: v2Accept},
		diffStep{writeStep: writeStep{name: "aggregated /apis, v2beta1", method: "GET", path: "/apis", same: []string{"kind", "apiVersion", apps + "subresources"}}, accept: v2beta1Accept},
		step("/api", "GET", "/api", []string{"kind", "versions", "serverAddressByClientCIDRs.#.clientCIDR"}),
		step("/apis", "GET", "/apis", []string{"kind", "apiVersion", `groups.#(name=="apps")`}),
		step("/apis/apps", "GET", "/apis/apps", []string{"kind", "apiVersion", "name", "versions", "preferredVersion"}),
		step("/api/v1", "GET", "/api/v1", []string{"kind", "groupVersion", `resources.#(name=="pods").verbs`, `resources.#(name=="pods").shortNames`, `resources.#(name=="pods").categories`,
			`resources.#(name=="pods").kind`, `resources.#(name=="pods").namespaced`, `resources.#(name=="pods").singularName`, `resources.#(name=="pods/status")`, `resources.#(name=="namespaces/status")`,
			`resources.#(name=="namespaces").verbs`, `resources.#(name=="namespaces").namespaced`, `resources.#(name=="configmaps").shortNames`}),
		step("/apis/apps/v1", "GET", "/apis/apps/v1", []string{"kind", "apiVersion", "groupVersion", `resources.#(name=="deployments").verbs`, `resources.#(name=="deployments").shortNames`,
			`resources.#(name=="deployments/scale")`, `resources.#(name=="deployments/status")`}),
		step("/apis/apps/v9", "GET", "/apis/apps/v9", []string{"kind", "status", "reason", "code"}),
		step("/api/v9", "GET", "/api/v9", []string{"kind", "status", "reason", "code"}),
	)

	// Writes whose answers the reads above do not cover.
	add(diffStep{writeStep: writeStep{"apply with another uid", "PATCH", cms + "/c3?fieldManager=m", applyCT, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c3","uid":"abc"}}`, statusFields}},
		diffStep{writeStep: writeStep{"apply with the uid of a deleted object", "PATCH", cms + "/c5?fieldManager=m", applyCT, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c5","uid":"0c5a0c5a-0000-4000-8000-000000000000"}}`, statusFields}},
		step("it was not recreated", "GET", cms+"/c5", statusFields),
		diffStep{writeStep: writeStep{"delete a selected collection", "DELETE", cms + q("labelSelector", "app=a", "fieldSelector", "metadata.name!=c7"), "", "", []string{"kind", "items.#.metadata.name"}}},
		diffStep{writeStep: writeStep{"delete a collection by a refused field", "DELETE", cms + q("fieldSelector", "data.k=v"), "", "", statusFields}},
		step("what is left", "GET", cms, listNames),
	)

	// History neither server has any more: both are compacted up to now.
	// The real server forgets on its own only after about fifteen minutes
	// (its compactor, then its watch cache's window), so a younger one
	// still served resourceVersion 1: its etcd is compacted, and it is
	// restarted so that its watch cache starts after that.
	compacted := w("from a compacted resourceVersion", "?resourceVersion=1", "#.object.kind", "#.object.code", "#.object.reason")
	compacted.before = func() {
		require.NoError(t, fake.Compact(fake.ResourceVersion()))
		latest, err := client(t).Resource(httpwatch.Resource{Version: "v1", Resource: "namespaces"}).ListPage(context.Background(), httpwatch.ListOptions{Limit: 1})
		require.NoError(t, err)
		compactEtcd(t, latest.ResourceVersion)
		dir := realapi.Env(t, "REALAPI_DIR")
		args, err := os.ReadFile(filepath.Join(dir, "apiserver.args"))
		require.NoError(t, err)
		restartAPIServer(t, dir, strings.TrimSpace(string(args)))
	}
	add(compacted,
		step("exact list at a compacted resourceVersion", "GET", cms+q("resourceVersion", "1", "resourceVersionMatch", "Exact"), []string{"kind", "status", "reason", "code"}),
		step("not-older-than list at a compacted resourceVersion", "GET", cms+q("resourceVersion", "1", "resourceVersionMatch", "NotOlderThan"), listNames),
	)
	n := compareSteps(t, servers, ns, steps)
	t.Logf("%d requests sent to each server", n)
}

// TestWatchtestSelectableFieldsMatchRealServer compares field selectors on
// a custom resource whose CustomResourceDefinition declares
// selectableFields with watchtest's Definition.SelectableFields, and the
// custom resource's discovery entries (decision 7).
func TestWatchtestSelectableFieldsMatchRealServer(t *testing.T) {
	cfg := config(t)
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	c := client(t)
	ctx := context.Background()
	crds := c.Resource(httpwatch.Resource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	group := fmt.Sprintf("sel%d.example.com", time.Now().UnixNano()%100000)
	_, err = crds.Create(ctx, fmt.Appendf(nil, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.%s"},
"spec":{"group":%q,"scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
"versions":[{"name":"v1","served":true,"storage":true,"selectableFields":[{"jsonPath":".spec.color"}],
"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"color":{"type":"string"},"size":{"type":"integer"}}}}}}}]}}`, group, group))
	require.NoError(t, err)
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "widgets."+group) })
	ns := namespace(t, c)
	fake := watchtest.NewServer()
	defer fake.Close()
	fake.AddResource(httpwatch.Resource{Group: group, Version: "v1", Resource: "widgets"}, watchtest.Definition{Kind: "Widget", Namespaced: true, SelectableFields: []string{"spec.color"}})
	servers := []rawServer{{"real", cfg.Host, &http.Client{Transport: rt, Timeout: 20 * time.Second}, map[string]string{}}, {"watchtest", fake.URL, fake.Client(), map[string]string{}}}
	widgets := "/apis/" + group + "/v1/namespaces/NS/widgets"
	require.Eventually(t, func() bool {
		code, _ := servers[0].do(t, writeStep{method: "GET", path: widgets}, ns)
		return code == http.StatusOK
	}, wait, 100*time.Millisecond, "the CRD is served")
	obj := func(name, color string) diffStep {
		return diffStep{writeStep: writeStep{"create " + name, "POST", widgets, "application/json",
			`{"apiVersion":"` + group + `/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"color":"` + color + `","size":1}}`, []string{"metadata.name", "spec"}}}
	}
	steps := []diffStep{obj("w1", "red"), obj("w2", "blue"), obj("w3", "red")}
	for _, sel := range []string{"spec.color=red", "spec.color!=red", "spec.color=green", "metadata.name=w2", "spec.color=red,metadata.name=w3", "spec.size=1", "status.phase=x"} {
		same := append([]string{"kind", "apiVersion", "items.#.metadata.name"}, statusFields...)
		steps = append(steps, step("list fieldSelector="+sel, "GET", widgets+q("fieldSelector", sel), same),
			step("watch fieldSelector="+sel, "GET", widgets+q("fieldSelector", sel, "watch", "1", "timeoutSeconds", "1", "resourceVersion", "0"), append(same, eventFields...)))
	}
	entry := `items.#(metadata.name=="` + group + `").versions.0.resources.0.`
	steps = append(steps,
		diffStep{writeStep: writeStep{name: "aggregated discovery of the group", method: "GET", path: "/apis", same: []string{
			entry + "resource", entry + "responseKind", entry + "scope", entry + "verbs", entry + "singularResource", entry + "subresources"}}, accept: v2Accept},
		step("the group version", "GET", "/apis/"+group+"/v1", []string{"kind", "groupVersion", `resources.#(name=="widgets").verbs`, `resources.#(name=="widgets").kind`, `resources.#(name=="widgets").namespaced`, `resources.#(name=="widgets").singularName`}),
	)
	t.Logf("%d requests sent to each server", compareSteps(t, servers, ns, steps))
}
