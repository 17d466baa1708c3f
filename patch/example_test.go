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
	applied, err := cms.Apply(ctx, note, httpwatch.WriteOptions{FieldManager: "labeller"})
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

// The object a controller makes for its owner, in one line: a summary
// ConfigMap controlled by a Deployment, applied with the owner reference
// that the garbage collector and reconcile.ControllerOf follow.
func ExampleBuilder_ControlledBy() {
	s := watchtest.NewServer()
	defer s.Close()
	client, _ := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	defer client.CloseIdleConnections()
	ctx := context.Background()
	d, _ := client.Resource(watchtest.Deployments).Namespace("shop").Create(ctx,
		[]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3}}`))

	body, err := patch.Object("v1", "ConfigMap", d.Namespace(), d.Name()+"-summary").ControlledBy(d).
		Set("data.replicas", d.Get("spec.replicas").String()).Bytes()
	if err != nil {
		panic(err)
	}
	cm, err := client.Resource(watchtest.ConfigMaps).Apply(ctx, body, httpwatch.WriteOptions{FieldManager: "summariser"})
	fmt.Println("apply:", err)
	ref := cm.Get("metadata.ownerReferences.0")
	fmt.Println(ref.Get("kind"), ref.Get("name"), ref.Get("controller"), ref.Get("blockOwnerDeletion"), ref.Get("uid").String() == d.UID())
	fmt.Println(cm.Get("data.replicas"))
	// Output:
	// apply: <nil>
	// Deployment web true true true
	// 3
}

// A Secret's data given as bytes or strings: the builder base64-encodes
// each value, as the API wants it.
func ExampleBuilder_SecretData() {
	body, _ := patch.Object("v1", "Secret", "ns", "web-tls").
		SecretData(map[string][]byte{"tls.crt": []byte("-----BEGIN CERTIFICATE-----\n")}).Bytes()
	fmt.Println(string(body))
	copied, _ := patch.Object("v1", "Secret", "ns", "settings").
		SecretStringData(map[string]string{"mode": "fast", "level": "3"}).Bytes()
	fmt.Println(string(copied))
	// Output:
	// {"apiVersion":"v1","kind":"Secret","metadata":{"name":"web-tls","namespace":"ns"},"data":{"tls.crt":"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}}
	// {"apiVersion":"v1","kind":"Secret","metadata":{"name":"settings","namespace":"ns"},"data":{"level":"Mw==","mode":"ZmFzdA=="}}
}
