package patch_test

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/watchtest"
)

// A label set at the version read, an annotation applied, and the same
// patch again once the object has moved on: 409 Conflict.
func Example() {
	s := watchtest.NewServer()
	defer s.Close()
	client, _ := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	defer client.CloseIdleConnections()
	cms := client.Resource(watchtest.ConfigMaps).Namespace("ns")
	ctx := context.Background()
	cm, _ := cms.Create(ctx, []byte(`{"metadata":{"name":"settings"}}`))

	label, _ := patch.Merge(cm, patch.ResourceVersion).Set("metadata.labels.checked", "true").Bytes()
	fmt.Println(string(label))
	_, err := cms.Patch(ctx, cm.Name(), httpwatch.MergePatch, label)
	fmt.Println("patch:", err)

	note, _ := patch.Apply(cm, patch.None).Set(`metadata.annotations.example\.com/note`, "say \"hi\"\n").Bytes()
	fmt.Println(string(note))
	applied, err := cms.Apply(ctx, note, httpwatch.ApplyOptions{FieldManager: "labeller"})
	fmt.Println("apply:", err, applied.Get(`metadata.annotations.example\.com/note`).String() == "say \"hi\"\n")

	_, err = cms.Patch(ctx, cm.Name(), httpwatch.MergePatch, label)
	fmt.Println("stale:", httpwatch.IsConflict(err))
	// Output:
	// {"metadata":{"resourceVersion":"2","labels":{"checked":"true"}}}
	// patch: <nil>
	// {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"ns","annotations":{"example.com/note":"say \"hi\"\n"}}}
	// apply: <nil> true
	// stale: true
}
