package listwatch_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/watchtest"
)

// A read-modify-write: an update carries the resourceVersion it read, so a
// stale one is a 409 Conflict; RetryOnConflict reads again and retries.
func Example_write() {
	server := watchtest.NewServer()
	defer server.Close()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	if err != nil {
		panic(err)
	}
	defer client.CloseIdleConnections()
	ctx := context.Background()
	cms := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"}).Namespace("shop")

	stale, err := cms.Create(ctx, []byte(`{"metadata":{"name":"settings"},"data":{"replicas":"3"}}`))
	if err != nil {
		panic(err)
	}
	// Someone else writes in between.
	if _, err := server.Update(watchtest.ConfigMaps, `{"metadata":{"name":"settings","namespace":"shop"},"data":{"replicas":"4"}}`); err != nil {
		panic(err)
	}

	attempts := 0
	err = httpwatch.RetryOnConflict(ctx, func(ctx context.Context) error {
		attempts++
		cm := stale
		if attempts > 1 {
			if cm, err = cms.Get(ctx, "settings"); err != nil {
				return err
			}
		}
		_, err := cms.Update(ctx, withLabel(cm, "checked", "true"), httpwatch.WriteOptions{FieldManager: "labeller"})
		if httpwatch.IsConflict(err) {
			fmt.Println("conflict at version", cm.ResourceVersion())
		}
		return err
	})
	if err != nil {
		panic(err)
	}
	cm, err := cms.Get(ctx, "settings")
	if err != nil {
		panic(err)
	}
	checked, _ := cm.Label("checked")
	fmt.Println("attempts:", attempts, "replicas:", cm.Get("data.replicas"), "checked:", checked)
	// Output:
	// conflict at version 2
	// attempts: 2 replicas: 4 checked: true
}

// withLabel returns the JSON of o with one more label. (A ConfigMap holds
// only strings; other kinds are better changed with a Patch, which needs no
// decoding.)
func withLabel(o *raw.Object, key, value string) []byte {
	var m map[string]any
	if err := o.Decode(&m); err != nil {
		panic(err)
	}
	meta := m["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		meta["labels"] = labels
	}
	labels[key] = value
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}
