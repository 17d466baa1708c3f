package bench_test

import (
	"testing"

	"github.com/tidwall/sjson"

	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/raw"
)

// The bodies a controller sends, built by package patch (a tree rendered
// once) and by github.com/tidwall/sjson (the JSON text edited path by
// path), which was suggested as an alternative. Both give the same JSON.
var patchObject, _ = raw.NewObject([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings-0042","namespace":"prod","uid":"5e0c3f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b","resourceVersion":"918273"}}`))

func BenchmarkMergePatchBuilder(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		out, err := patch.Merge(patchObject, patch.ResourceVersion).
			Set("metadata.labels.checked", "true").
			Set(`metadata.annotations.example\.com/checked-by`, "labeller \"v2\"").
			Bytes()
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkMergePatchSjson(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		out, err := sjson.SetBytes([]byte(`{}`), "metadata.resourceVersion", patchObject.ResourceVersion())
		if err == nil {
			out, err = sjson.SetBytes(out, "metadata.labels.checked", "true")
		}
		if err == nil {
			out, err = sjson.SetBytes(out, `metadata.annotations.example\.com/checked-by`, "labeller \"v2\"")
		}
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyBuilder(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		out, err := patch.Apply(patchObject, patch.None).
			Set("metadata.labels.report-of", patchObject.Name()).
			Set("data.keys", "12").
			Set("metadata.ownerReferences", []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "uid": "u", "controller": true}}).
			Bytes()
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplySjson(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		out := []byte(`{}`)
		var err error
		for _, kv := range [][2]string{
			{"apiVersion", patchObject.APIVersion()}, {"kind", patchObject.Kind()},
			{"metadata.name", patchObject.Name()}, {"metadata.namespace", patchObject.Namespace()},
			{"metadata.labels.report-of", patchObject.Name()}, {"data.keys", "12"},
		} {
			if out, err = sjson.SetBytes(out, kv[0], kv[1]); err != nil {
				b.Fatal(err)
			}
		}
		out, err = sjson.SetBytes(out, "metadata.ownerReferences", []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "uid": "u", "controller": true}})
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

// Both write the same merge patch.
func TestPatchBuildersAgree(t *testing.T) {
	ours, err := patch.Merge(patchObject, patch.ResourceVersion).Set("metadata.labels.checked", "true").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	theirs, _ := sjson.SetBytes([]byte(`{}`), "metadata.resourceVersion", patchObject.ResourceVersion())
	theirs, _ = sjson.SetBytes(theirs, "metadata.labels.checked", "true")
	if string(ours) != string(theirs) {
		t.Errorf("patch %s, sjson %s", ours, theirs)
	}
}
