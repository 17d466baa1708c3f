package watchtest_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// FuzzPatch sends arbitrary patches of every media type. Whatever the
// patch, the answer is a success holding the stored object, or a client
// error that changed nothing: never a panic, a 500 or a half-made write.
func FuzzPatch(f *testing.F) {
	seeds := []struct{ ct, body string }{
		{mergeType, `{"metadata":{"labels":{"a":null,"b":"2"}},"data":{"k":"v"}}`},
		{mergeType, `{"metadata":null}`},
		{mergeType, `{"metadata":{"finalizers":["x"]}}`},
		{jsonPatchType, `[{"op":"add","path":"/data/x~1y","value":"1"},{"op":"move","from":"/data/x~1y","path":"/data/z"}]`},
		{jsonPatchType, `[{"op":"add","path":"/metadata/finalizers/-","value":"a"},{"op":"copy","from":"/metadata","path":"/data/m"}]`},
		{jsonPatchType, `[{"op":"replace","path":"","value":{}}]`},
		{smpType, `{"spec":{"containers":[{"name":"app","$patch":"delete"},{"name":"b","image":"x"}]}}`},
		{smpType, `{"metadata":{"finalizers":["x"]},"$patch":"replace"}`},
		{applyType, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n"},
		{applyType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"2"}}`},
	}
	types := []string{mergeType, jsonPatchType, smpType, applyType, "text/plain"}
	for _, s := range seeds {
		f.Add(uint8(slices.Index(types, s.ct)), s.body)
	}
	s := watchtest.NewServer()
	f.Cleanup(s.Close)
	f.Fuzz(func(t *testing.T, typ uint8, body string) {
		ct := types[int(typ)%len(types)]
		// Clear finalizers first, so that the delete leaves nothing behind.
		_, _ = s.Update(watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"prod"}}`)
		_, _ = s.Delete(watchtest.ConfigMaps, "prod", "a")
		_, err := s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"prod","labels":{"a":"1"}},"data":{"k":"v"},"spec":{"containers":[{"name":"app"}]}}`)
		if err != nil {
			t.Fatal(err)
		}
		before := s.ResourceVersion()
		code, got := send(t, s, http.MethodPatch, cmPath+"a?fieldManager=fuzz", ct, body)
		switch {
		case code == http.StatusOK:
			stored, err := s.Get(watchtest.ConfigMaps, "prod", "a")
			if err != nil {
				return // the patch removed the last finalizer of a deleted object
			}
			if !json.Valid(got) || gjson.GetBytes(got, "metadata.resourceVersion").String() != stored.ResourceVersion() {
				t.Fatalf("answer %s is not what was stored: %s", got, stored)
			}
		case code >= 400 && code < 500:
			if s.ResourceVersion() != before {
				t.Fatalf("HTTP %d but the resourceVersion moved from %s to %s", code, before, s.ResourceVersion())
			}
			if gjson.GetBytes(got, "kind").String() != "Status" {
				t.Fatalf("HTTP %d without a Status: %s", code, got)
			}
		default:
			t.Fatalf("HTTP %d: %s", code, got)
		}
	})
}
