package httpwatch

import (
	"bytes"
	"encoding/json"
	"testing"
)

func BenchmarkTmpBuild(b *testing.B) {
	var ev struct{ Object json.RawMessage }
	pods, _ := watchStream(b, 1)
	json.Unmarshal(bytes.SplitN(pods, []byte("\n"), 2)[0], &ev)
	b.SetBytes(int64(len(ev.Object)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildObject(ev.Object, buildOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
