package snapshot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/snapshot"
)

func Example() {
	dir, _ := os.MkdirTemp("", "snap")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pods.v1.snap")

	pod, _ := raw.NewObject([]byte(`{"kind":"Pod","metadata":{"name":"a","namespace":"ns","resourceVersion":"7"}}`))
	key := snapshot.Key{Server: "https://10.0.0.1:6443", Resource: "pods.v1"}
	err := snapshot.WriteFile(path, &snapshot.Snapshot{Key: key, ResourceVersion: "7", Objects: []*raw.Object{pod}, Written: time.Now()})
	fmt.Println(err)

	snap, err := snapshot.ReadFile(path, key, snapshot.Limits{})
	fmt.Println(err, snap.ResourceVersion, snap.Objects[0].Name())

	key.Namespace = "other"
	_, err = snapshot.ReadFile(path, key, snapshot.Limits{})
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// <nil> 7 a
	// true
}
