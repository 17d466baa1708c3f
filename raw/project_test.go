package raw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/stretchr/testify/require"
)

func TestNewProjectionRejects(t *testing.T) {
	for _, path := range []string{
		"", ".", "spec.", ".spec", "spec..nodeName", `spec\`,
		"spec.containers.0.image", "spec.containers.#.image", "spec.containers.#(name==app)",
		"metadata.labels.*", "metadata.labels.a?p", "spec|@pretty", "@this", "[spec,status]",
		"{spec}", "!true", "spec.containers.00",
	} {
		_, err := NewProjection("metadata.labels", path)
		require.ErrorIs(t, err, ErrProjectionPath, "%q", path)
		require.Contains(t, err.Error(), "projection path", "%q", path)
	}
}

func TestNewProjectionBoundsNames(t *testing.T) {
	var paths []string
	for i := range maxKids - 1 {
		paths = append(paths, fmt.Sprintf("spec.f%d", i))
	}
	_, err := NewProjection(append(paths, "spec.last", "spec.last.deeper")...)
	require.NoError(t, err)
	_, err = NewProjection(append(paths, "spec.last", "spec.one-too-many")...)
	require.ErrorIs(t, err, ErrProjectionPath)
	require.ErrorContains(t, err, `projection path "spec.one-too-many": unsupported projection path: more than 64 names kept in one object`)
}

func TestNewProjectionAccepts(t *testing.T) {
	p, err := NewProjection("spec.nodeName", `metadata.labels.app\.kubernetes\.io/name`, `data.x\*y`, "status.v1-beta_2")
	require.NoError(t, err)
	require.Equal(t, []string{"spec.nodeName", `metadata.labels.app\.kubernetes\.io/name`, `data.x\*y`, "status.v1-beta_2"}, p.Paths())
}

// project builds src cut by paths, as a list item without kind and
// apiVersion would be.
func project(t *testing.T, src string, drop bool, paths ...string) *Object {
	t.Helper()
	p, err := NewProjection(paths...)
	require.NoError(t, err)
	so := &Decoder{DropManagedFields: drop, Projection: p}
	o, err := so.object([]byte(src), nil, knownSpans{})
	require.NoError(t, err)
	return o
}

const projPod = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","generateName":"web-","namespace":"ns","uid":"u-1",` +
	`"resourceVersion":"73","labels":{"app":"web","app.kubernetes.io/name":"shop"},"annotations":{"a":"1"},` +
	`"ownerReferences":[{"kind":"ReplicaSet","name":"web","uid":"o-1"}],` +
	`"managedFields":[{"manager":"m"}]},` +
	`"spec":{"containers":[{"name":"app","image":"nginx"}],"nodeName":"node-1","tolerations":[]},` +
	`"status":{"phase":"Running","conditions":[{"type":"Ready"}],"podIP":"10.0.0.1"}}`

// TestProjectionCuts (decision 5: a projection is part of the one transform
// hook): what each kind of path keeps of an object.
func TestProjectionCuts(t *testing.T) {
	identity := `"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"ns","uid":"u-1","resourceVersion":"73"`
	for _, tc := range []struct {
		name  string
		src   string
		drop  bool
		paths []string
		want  string
	}{
		{"identity only", projPod, true, nil, `{` + identity + `}}`},
		{"the issue's fields", projPod, true,
			[]string{"metadata.labels", "spec.nodeName", "status.phase", "metadata.ownerReferences"},
			`{` + identity + `,"labels":{"app":"web","app.kubernetes.io/name":"shop"},"ownerReferences":[{"kind":"ReplicaSet","name":"web","uid":"o-1"}]},` +
				`"spec":{"nodeName":"node-1"},"status":{"phase":"Running"}}`},
		{"one escaped label", projPod, true, []string{`metadata.labels.app\.kubernetes\.io/name`},
			`{` + identity + `,"labels":{"app.kubernetes.io/name":"shop"}}}`},
		{"whole subtree", projPod, true, []string{"spec"},
			`{` + identity + `},"spec":{"containers":[{"name":"app","image":"nginx"}],"nodeName":"node-1","tolerations":[]}}`},
		{"whole wins over a part of it", projPod, true, []string{"spec.nodeName", "spec", "spec.containers"},
			`{` + identity + `},"spec":{"containers":[{"name":"app","image":"nginx"}],"nodeName":"node-1","tolerations":[]}}`},
		{"whole metadata loses managedFields", projPod, true, []string{"metadata"},
			`{` + identity[:len(identity)-len(`,"namespace":"ns","uid":"u-1","resourceVersion":"73"`)] +
				`,"generateName":"web-","namespace":"ns","uid":"u-1","resourceVersion":"73","labels":{"app":"web","app.kubernetes.io/name":"shop"},"annotations":{"a":"1"},` +
				`"ownerReferences":[{"kind":"ReplicaSet","name":"web","uid":"o-1"}]}}`},
		{"managedFields kept when asked and not dropped", projPod, false, []string{"metadata.managedFields"},
			`{` + identity + `,"managedFields":[{"manager":"m"}]}}`},
		{"managedFields dropped even when asked", projPod, true, []string{"metadata.managedFields"}, `{` + identity + `}}`},
		{"an object on the way is kept empty", projPod, true, []string{"spec.hostname"}, `{` + identity + `},"spec":{}}`},
		{"no reaching into arrays", projPod, true, []string{"spec.containers.image"}, `{` + identity + `},"spec":{}}`},
		{"a non-object on the way is left out", `{"metadata":{"name":"a"},"spec":null,"status":"x"}`, true,
			[]string{"spec.nodeName", "status.phase"}, `{"metadata":{"name":"a"}}`},
		{"absent paths add nothing", `{"metadata":{"name":"a"}}`, true, []string{"spec.nodeName"}, `{"metadata":{"name":"a"}}`},
		{"whitespace kept inside kept values", "{ \"metadata\" : { \"name\" : \"a\" , \"x\":1 } , \"spec\" : { \"n\" : [ 1 ] } }", true,
			[]string{"spec.n"}, "{\"metadata\" : {\"name\" : \"a\"},\"spec\" : {\"n\" : [ 1 ]}}"},
		{"escaped keys match their names", `{"metadata":{"\u006eame":"a","labels":{"a\u002eb":"1","c":"2"}}}`, true,
			[]string{`metadata.labels.a\.b`}, `{"metadata":{"\u006eame":"a","labels":{"a\u002eb":"1"}}}`},
		{"repeats at the top: the last counts", `{"spec":{"nodeName":"n1"},"metadata":{"name":"a"},"spec":7}`, true,
			[]string{"spec.nodeName"}, `{"metadata":{"name":"a"}}`},
		{"repeats in metadata: the last counts", `{"metadata":{"name":"a","labels":{"x":"1"},"name":"b","labels":null}}`, true,
			[]string{"metadata.labels"}, `{"metadata":{"name":"b","labels":null}}`},
		{"repeats deeper: the first counts, as for Get", `{"metadata":{"name":"a"},"spec":{"n":1,"x":2,"n":3}}`, true,
			[]string{"spec.n"}, `{"metadata":{"name":"a"},"spec":{"n":1}}`},
		{"repeats deeper: the first counts, all found or not", `{"metadata":{"name":"a"},"spec":{"n":1,"x":2,"n":3}}`, true,
			[]string{"spec.n", "spec.m"}, `{"metadata":{"name":"a"},"spec":{"n":1}}`},
		{"the rest of an object after its last kept member", `{"metadata":{"name":"a"},"spec":{"n":{"a":[1,{"b":"}"}]},"x":[{"y":"]"}],"z":{}},"status":{}}`, true,
			[]string{"spec.n.a", "status"}, `{"metadata":{"name":"a"},"spec":{"n":{"a":[1,{"b":"}"}]}},"status":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := project(t, tc.src, tc.drop, tc.paths...)
			require.Equal(t, tc.want, o.String())
			require.True(t, json.Valid(o.Raw()))
			accessorsAgree(t, o)
		})
	}
}

// TestProjectionInsertsTypeMeta: list items without kind and apiVersion
// get them, projected or not.
func TestProjectionInsertsTypeMeta(t *testing.T) {
	p, err := NewProjection("spec.nodeName")
	require.NoError(t, err)
	body := `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[` +
		`{"metadata":{"name":"a","namespace":"ns","resourceVersion":"7","managedFields":[]},"spec":{"nodeName":"n","x":1}},` +
		`{"metadata":{"name":"b"}}]}`
	page, err := (&Decoder{DropManagedFields: true, Projection: p}).DecodeList(strings.NewReader(body), 0)
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	require.Equal(t, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"7"},"spec":{"nodeName":"n"}}`, page.Items[0].String())
	require.Equal(t, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"b"}}`, page.Items[1].String())
}

// TestProjectionWatch: watch objects are cut, bookmarks are not (they carry
// only metadata anyway), and the transform sees the projected object.
func TestProjectionWatch(t *testing.T) {
	p, err := NewProjection("status.phase")
	require.NoError(t, err)
	var seen []string
	so := &Decoder{DropManagedFields: true, Projection: p, Transform: func(o *Object) (*Object, error) {
		seen = append(seen, o.String())
		return o, nil
	}}
	stream := `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5","labels":{"x":"y"}},"spec":{"n":1},"status":{"phase":"Running","podIP":"1"}}}` + "\n" +
		`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"6","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
	w := newTestWatcher(strings.NewReader(stream), so)
	ev, err := w.Next()
	require.NoError(t, err)
	want := `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"},"status":{"phase":"Running"}}`
	require.Equal(t, want, ev.Object.String())
	require.Equal(t, []string{want}, seen)
	ev, err = w.Next()
	require.NoError(t, err)
	require.Equal(t, "BOOKMARK", ev.Type)
	require.Equal(t, "true", ev.Object.Get(`metadata.annotations.k8s\.io/initial-events-end`).String())
}

// TestProjectedAccessors (decision 5): every accessor reads a
// projected object as if the fields left out had never been sent: the same
// as on an object holding only the kept JSON, and the unprojected value for
// what is kept.
func TestProjectedAccessors(t *testing.T) {
	kept := project(t, projPod, true, "metadata.labels", "metadata.annotations", "metadata.ownerReferences", "spec.nodeName")
	bare := project(t, projPod, true)
	type view struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name         string            `json:"name"`
			GenerateName string            `json:"generateName"`
			Labels       map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			NodeName   string `json:"nodeName"`
			Containers []any  `json:"containers"`
		} `json:"spec"`
		Status *struct{ Phase string } `json:"status"`
	}
	decode := func(o *Object) any {
		var v view
		require.NoError(t, o.Decode(&v))
		return v
	}
	var keptView, bareView view
	keptView.Kind, keptView.Metadata.Name, keptView.Spec.NodeName = "Pod", "web-1", "node-1"
	keptView.Metadata.Labels = map[string]string{"app": "web", "app.kubernetes.io/name": "shop"}
	bareView.Kind, bareView.Metadata.Name = "Pod", "web-1"
	label := func(o *Object) any { v, ok := o.Label("app.kubernetes.io/name"); return []any{v, ok} }
	annotation := func(o *Object) any { v, ok := o.Annotation("a"); return []any{v, ok} }
	for _, tc := range []struct {
		accessor   string
		read       func(*Object) any
		kept, bare any
	}{
		{"Name", func(o *Object) any { return o.Name() }, "web-1", "web-1"},
		{"Namespace", func(o *Object) any { return o.Namespace() }, "ns", "ns"},
		{"UID", func(o *Object) any { return o.UID() }, "u-1", "u-1"},
		{"ResourceVersion", func(o *Object) any { return o.ResourceVersion() }, "73", "73"},
		{"Kind", func(o *Object) any { return o.Kind() }, "Pod", "Pod"},
		{"APIVersion", func(o *Object) any { return o.APIVersion() }, "v1", "v1"},
		{"Labels", func(o *Object) any { return o.Labels() },
			map[string]string{"app": "web", "app.kubernetes.io/name": "shop"}, map[string]string(nil)},
		{"Label", label, []any{"shop", true}, []any{"", false}},
		{"Annotations", func(o *Object) any { return o.Annotations() }, map[string]string{"a": "1"}, map[string]string(nil)},
		{"Annotation", annotation, []any{"1", true}, []any{"", false}},
		{"OwnerUIDs", func(o *Object) any { return o.OwnerUIDs() }, []string{"o-1"}, []string(nil)},
		{"Get kept", func(o *Object) any { return o.Get("spec.nodeName").Raw }, `"node-1"`, ""},
		{"Get left out", func(o *Object) any {
			return []bool{o.Get("spec.containers").Exists(), o.Get("status").Exists(), o.Get("metadata.generateName").Exists()}
		}, []bool{false, false, false}, []bool{false, false, false}},
		{"Decode", decode, keptView, bareView},
		{"String", func(o *Object) any { return o.String() },
			`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"ns","uid":"u-1","resourceVersion":"73",` +
				`"labels":{"app":"web","app.kubernetes.io/name":"shop"},"annotations":{"a":"1"},"ownerReferences":[{"kind":"ReplicaSet","name":"web","uid":"o-1"}]},` +
				`"spec":{"nodeName":"node-1"}}`,
			`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"ns","uid":"u-1","resourceVersion":"73"}}`},
		{"Raw", func(o *Object) any { return string(o.Raw()) }, kept.String(), bare.String()},
	} {
		t.Run(tc.accessor, func(t *testing.T) {
			for _, c := range []struct {
				name string
				o    *Object
				want any
			}{{"kept", kept, tc.kept}, {"left out", bare, tc.bare}} {
				require.Equal(t, c.want, tc.read(c.o), c.name)
				// The same as an object that only ever held the kept JSON.
				plain, err := NewObject(c.o.Raw())
				require.NoError(t, err)
				require.Equal(t, tc.read(plain), tc.read(c.o), c.name)
			}
		})
	}
}

// FuzzProjection: a projected object is the unprojected one with only the
// kept paths (see refCut), whichever way it arrives (alone, a list item, a
// watch event); gjson finds each kept path as in the unprojected object, or
// nowhere if a non-object stood on the way; the metadata accessors agree.
func FuzzProjection(f *testing.F) {
	issue := "metadata.labels,spec.nodeName,status.phase,metadata.ownerReferences"
	for _, name := range []string{"pod-list.json", "crd-list.json", "namespace-list.json"} {
		var list struct{ Items []json.RawMessage }
		if err := json.Unmarshal(fixtures.Load(f, name).Body, &list); err != nil {
			f.Fatal(err)
		}
		for _, it := range list.Items {
			f.Add([]byte(it), issue, true)
		}
	}
	for _, paths := range []string{issue, "", "spec", "metadata", "metadata.managedFields,spec.containers", `metadata.labels.app\.kubernetes\.io/name`} {
		f.Add([]byte(projPod), paths, false)
		f.Add([]byte(projPod), paths, true)
	}
	f.Add([]byte(`{"spec":{"nodeName":"n1"},"metadata":{"name":"a","labels":{"x":"1"},"labels":null},"spec":7}`), issue, true)
	f.Add([]byte(`{"metadata":null,"spec":{"n":{"m":1},"n":[2]}}`), "spec.n.m", true)
	f.Add([]byte(`{"metadata":{"name":"a"},"spec":{"n":{"a":[1,{"b":"}"}]},"x":[{"y":"]"}],"z":{}},"status":{}}`), "spec.n.a,status", true)
	f.Fuzz(func(t *testing.T, data []byte, pathList string, drop bool) {
		var paths []string
		if pathList != "" {
			paths = strings.Split(pathList, ",")
		}
		p, err := NewProjection(paths...)
		if err != nil {
			require.ErrorIs(t, err, ErrProjectionPath)
			return
		}
		so := &Decoder{DropManagedFields: drop, Projection: p, MaxFrameSize: fuzzMaxFrame}
		got, gerr := so.object(data, nil, knownSpans{})
		if Validate(data) != nil || len(data) == 0 || data[0] != '{' {
			return // no panic is all that is asked
		}
		whole, werr := (&Decoder{DropManagedFields: drop}).object(data, nil, knownSpans{})
		require.Equal(t, werr == nil, gerr == nil, "projected: %v, whole: %v", gerr, werr)
		if werr != nil {
			return
		}
		require.True(t, json.Valid(got.Raw()), "%s", got.Raw())
		accessorsAgree(t, got)
		for _, read := range []func(*Object) string{(*Object).Name, (*Object).Namespace, (*Object).UID, (*Object).ResourceVersion, (*Object).Kind, (*Object).APIVersion} {
			require.Equal(t, read(whole), read(got))
		}
		sameWhicheverWay(t, so, data, got)
		if repeatsKeys(t, whole.Raw()) {
			return // deeper repeats: Get reads the first, Decode the last
		}
		want, _ := refCut(t, decodeAny(t, whole.Raw()), p.root, true)
		require.Equal(t, want, decodeAny(t, got.Raw()), "cut %s by %q to %s", whole.Raw(), paths, got.Raw())
		for _, path := range append(paths, identity...) {
			w, g := whole.Get(path), got.Get(path)
			if !throughObjects(whole, path) {
				require.False(t, g.Exists(), "%s in %s", path, got.Raw())
				continue
			}
			require.Equal(t, w.Exists(), g.Exists(), "%s in %s and %s", path, whole.Raw(), got.Raw())
			if w.Exists() {
				require.Equal(t, decodeAny(t, []byte(w.Raw)), decodeAny(t, []byte(g.Raw)), "%s in %s and %s", path, whole.Raw(), got.Raw())
			}
		}
	})
}

// sameWhicheverWay checks that data as a list item and in a watch event is
// cut as it was alone.
func sameWhicheverWay(t *testing.T, so *Decoder, data []byte, alone *Object) {
	page, err := so.DecodeList(strings.NewReader(`{"kind":"List","items":[`+string(data)+`]}`), 0)
	require.NoError(t, err)
	require.Equal(t, alone.String(), page.Items[0].String())
	w := newTestWatcher(strings.NewReader(`{"type":"ADDED","object":`+string(data)+`}`), so)
	ev, err := w.Next()
	require.NoError(t, err)
	require.Equal(t, alone.String(), ev.Object.String())
}

// refCut is what a projection means, on decoded JSON: keep what node keeps
// of objects; a non-object that node would cut is left out (false). A
// metadata that is no object is kept (it can only be null here).
func refCut(t *testing.T, v any, node *keepNode, top bool) (any, bool) {
	if node.whole {
		return v, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := map[string]any{}
	for k, x := range m {
		kid, _ := node.kid([]byte(k))
		if top && k == "metadata" {
			if _, ok := x.(map[string]any); !ok {
				kid = keepAll
			}
		}
		if kid == nil {
			continue
		}
		if y, ok := refCut(t, x, kid, false); ok {
			out[k] = y
		}
	}
	return out, true
}

func decodeAny(t *testing.T, b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

// throughObjects reports whether every value on the way to path in o is
// an object.
func throughObjects(o *Object, path string) bool {
	for i := range len(path) {
		if path[i] == '.' && (i == 0 || path[i-1] != '\\') {
			if !o.Get(path[:i]).IsObject() {
				return false
			}
		}
	}
	return true
}

// repeatsKeys reports whether any object in the JSON b repeats a key.
func repeatsKeys(t *testing.T, b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	type level struct {
		keys   map[string]bool
		object bool
		key    bool // the next string is a key
	}
	var stack []*level
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return false
		}
		require.NoError(t, err)
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &level{keys: map[string]bool{}, object: tok == '{', key: tok == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.object && top.key {
				if top.keys[tok] {
					return true
				}
				top.keys[tok], top.key = true, false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
}
