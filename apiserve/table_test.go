package apiserve_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
)

var t0 = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

func TestAgePrintsAsTheRealServer(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-5 * time.Second: "<invalid>", -time.Second: "0s", 0: "0s", 59 * time.Second: "59s",
		119 * time.Second: "119s", 2 * time.Minute: "2m", 3*time.Minute + 12*time.Second: "3m12s",
		10 * time.Minute: "10m", 179 * time.Minute: "179m", 3 * time.Hour: "3h", 3*time.Hour + 5*time.Minute: "3h5m",
		8 * time.Hour: "8h", 47 * time.Hour: "47h", 48 * time.Hour: "2d", 50 * time.Hour: "2d2h",
		8 * 24 * time.Hour: "8d", 729 * 24 * time.Hour: "729d", 730 * 24 * time.Hour: "2y", 731 * 24 * time.Hour: "2y1d",
		9 * 365 * 24 * time.Hour: "9y",
	} {
		require.Equal(t, want, apiserve.Age(t0, t0.Add(d)), d.String())
	}
	require.Equal(t, "<unknown>", apiserve.Age(time.Time{}, t0))
}

func cells(t *testing.T, p apiserve.Printer, obj string) []any {
	t.Helper()
	require.True(t, json.Valid([]byte(obj)))
	return p.Cells(gjson.Parse(obj), t0.Add(90*time.Second))
}

const created = `"creationTimestamp":"2026-12-07T10:00:00Z"`

// Decision 40: the built-in resources kubectl prints most have the real
// server's columns and cells, wide ones included.
func TestPrintersFillTheRealColumns(t *testing.T) {
	for _, tc := range []struct {
		group, resource, obj string
		want                 []any
	}{
		{"", "configmaps", `{"metadata":{"name":"c",` + created + `},"data":{"a":"1","b":"2"},"binaryData":{"c":"AA=="}}`,
			[]any{"c", int64(3), "90s"}},
		{"", "secrets", `{"metadata":{"name":"s",` + created + `},"type":"Opaque","data":{"a":"MQ=="}}`,
			[]any{"s", "Opaque", int64(1), "90s"}},
		{"", "namespaces", `{"metadata":{"name":"n",` + created + `},"status":{"phase":"Terminating"}}`,
			[]any{"n", "Terminating", "90s"}},
		{"", "pods", `{"metadata":{"name":"p",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]}}`,
			[]any{"p", "0/2", "Pending", "0", "90s", "<none>", "<none>", "<none>", "<none>"}},
		{"", "pods", `{"metadata":{"name":"p",` + created + `,"deletionTimestamp":"2026-12-07T10:01:00Z"},"spec":{"nodeName":"n1","containers":[{"name":"a"}]},
			"status":{"phase":"Running","podIPs":[{"ip":"10.0.0.5"}],"containerStatuses":[{"name":"a","ready":true,"restartCount":2,"state":{"running":{}},
			"lastState":{"terminated":{"finishedAt":"2026-12-07T10:00:30Z"}}}]}}`,
			[]any{"p", "1/1", "Terminating", "2 (60s ago)", "90s", "10.0.0.5", "n1", "<none>", "<none>"}},
		{"", "pods", `{"metadata":{"name":"p",` + created + `},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Pending","containerStatuses":[{"name":"a","state":{"waiting":{"reason":"ImagePullBackOff"}}}]}}`,
			[]any{"p", "0/1", "ImagePullBackOff", "0", "90s", "<none>", "<none>", "<none>", "<none>"}},
		{"apps", "deployments", `{"metadata":{"name":"d",` + created + `},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]}]},
			"template":{"spec":{"containers":[{"name":"web","image":"nginx"},{"name":"side","image":"busybox"}]}}},"status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}`,
			[]any{"d", "2/3", int64(3), int64(2), "90s", "web,side", "nginx,busybox", "app=web,tier in (a,b)"}},
		{"", "services", `{"metadata":{"name":"svc",` + created + `},"spec":{"type":"NodePort","clusterIPs":["10.0.0.10"],"ports":[{"port":80,"protocol":"TCP","nodePort":30080},{"port":53,"protocol":"UDP"}],"selector":{"b":"2","a":"1"}}}`,
			[]any{"svc", "NodePort", "10.0.0.10", "<none>", "80:30080/TCP,53/UDP", "90s", "a=1,b=2"}},
		{"", "services", `{"metadata":{"name":"lb",` + created + `},"spec":{"type":"LoadBalancer","clusterIPs":["10.0.0.11"],"ports":[{"port":443,"protocol":"TCP"}]}}`,
			[]any{"lb", "LoadBalancer", "10.0.0.11", "<pending>", "443/TCP", "90s", "<none>"}},
		{"", "nodes", `{"metadata":{"name":"n1",` + created + `,"labels":{"node-role.kubernetes.io/control-plane":"","kubernetes.io/role":"master"}},"spec":{"unschedulable":true},
			"status":{"conditions":[{"type":"Ready","status":"False"}],"nodeInfo":{"kubeletVersion":"v1.37.2","architecture":"amd64","kernelVersion":"6.1"},"addresses":[{"type":"InternalIP","address":"10.1.0.1"}]}}`,
			[]any{"n1", "NotReady,SchedulingDisabled", "control-plane,master", "90s", "v1.37.2", "10.1.0.1", "<none>", "<unknown>", "6.1 (amd64)", "<unknown>"}},
		{"", "events", `{"metadata":{"name":"e1",` + created + `},"involvedObject":{"kind":"Pod","name":"p","fieldPath":"spec.containers{a}"},"reason":"Pulled","message":" done ","type":"Normal",
			"source":{"component":"kubelet","host":"n1"},"firstTimestamp":"2026-12-07T10:00:00Z","lastTimestamp":"2026-12-07T10:01:00Z","count":4}`,
			[]any{"30s", "Normal", "Pulled", "pod/p", "spec.containers{a}", "kubelet, n1", "done", "90s", int64(4), "e1"}},
		{"events.k8s.io", "events", `{"metadata":{"name":"e2",` + created + `},"regarding":{"kind":"Lease","name":"l"},"reason":"R","note":"n","type":"Warning",
			"eventTime":"2026-12-07T10:00:00.000000Z","reportingController":"ctl","reportingInstance":"i"}`,
			[]any{"90s", "Warning", "R", "lease/l", "", "ctl, i", "n", "90s", int64(1), "e2"}},
		{"coordination.k8s.io", "leases", `{"metadata":{"name":"l",` + created + `},"spec":{"holderIdentity":"me"}}`,
			[]any{"l", "me", "90s"}},
		{"storage.k8s.io", "csidrivers", `{"metadata":{"name":"x",` + created + `}}`,
			[]any{"x", "2026-12-07T10:00:00Z"}},
	} {
		t.Run(tc.group+"/"+tc.resource, func(t *testing.T) {
			p := apiserve.PrinterFor(tc.group, tc.resource)
			got := cells(t, p, tc.obj)
			require.Equal(t, tc.want, got)
			require.Len(t, p.Columns, len(got), "one column per cell")
			require.Equal(t, "name", p.Columns[slicesIndexName(p.Columns)].Format)
		})
	}
}

func slicesIndexName(cols []apiserve.Column) int {
	for i, c := range cols {
		if c.Name == "Name" {
			return i
		}
	}
	return -1
}

// Decision 40: a custom resource prints its additionalPrinterColumns by
// their JSONPaths and types; without any, Name and Age.
func TestCustomPrinterFollowsPrinterColumns(t *testing.T) {
	p := apiserve.CustomPrinter([]apiserve.PrinterColumn{
		{Name: "Color", Type: "string", JSONPath: ".spec.color"},
		{Name: "Size", Type: "integer", JSONPath: ".spec.size", Priority: 1},
		{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio"},
		{Name: "On", Type: "boolean", JSONPath: ".spec.on"},
		{Name: "Since", Type: "date", JSONPath: ".status.since"},
		{Name: "App", Type: "string", JSONPath: `.metadata.labels.app\.kubernetes\.io/name`, Description: "the app"},
		{Name: "First", Type: "string", JSONPath: ".spec.items[0].name"},
		{Name: "Missing", Type: "string", JSONPath: ".spec.nothing"},
		{Name: "Wrong", Type: "integer", JSONPath: ".spec.color"},
	})
	got := cells(t, p, `{"metadata":{"name":"w",`+created+`,"labels":{"app.kubernetes.io/name":"shop"}},
		"spec":{"color":"red","size":3,"ratio":0.5,"on":true,"items":[{"name":"i0"}]},"status":{"since":"2026-12-07T10:00:30Z"}}`)
	require.Equal(t, []any{"w", "red", int64(3), 0.5, true, "60s", "shop", "i0", nil, nil}, got)
	require.Equal(t, "Name", p.Columns[0].Name)
	require.Equal(t, apiserve.Column{Name: "Size", Type: "integer", Priority: 1, Description: "Custom resource definition column (in JSONPath format): .spec.size"}, p.Columns[2])
	require.Equal(t, "the app", p.Columns[6].Description)

	def := apiserve.CustomPrinter(nil)
	require.Equal(t, []string{"Name", "Age"}, []string{def.Columns[0].Name, def.Columns[1].Name})
	require.Equal(t, "date", def.Columns[1].Type)
	require.Equal(t, []any{"w", "90s"}, cells(t, def, `{"metadata":{"name":"w",`+created+`}}`))
}

// Decision 40: a Table is laid out as the real server lays it out; a row
// carries the object's metadata as stored, without managedFields, or the
// whole object, or nothing.
func TestAppendTableLayout(t *testing.T) {
	p := apiserve.PrinterFor("coordination.k8s.io", "leases")
	obj := []byte(`{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"l","managedFields":[{"manager":"m"}],"resourceVersion":"5",` + created + `},"spec":{"holderIdentity":"me"}}`)
	rem := int64(4)
	meta := apiserve.ListMeta{ResourceVersion: "9", Continue: "tok", RemainingItemCount: &rem}
	cols, _ := json.Marshal(p.Columns)

	got := apiserve.AppendTable(nil, p, [][]byte{obj}, meta, apiserve.TableRequest{Output: apiserve.Output{Table: true, TableVersion: "v1"}, Include: apiserve.IncludeMetadata, Now: t0})
	require.JSONEq(t, `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9","continue":"tok","remainingItemCount":4},
		"columnDefinitions":`+string(cols)+`,
		"rows":[{"cells":["l","me","0s"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"l","resourceVersion":"5",`+created+`}}}]}`, string(got))

	got = apiserve.AppendTable(nil, p, [][]byte{obj}, apiserve.ListMeta{ResourceVersion: "5"}, apiserve.TableRequest{Output: apiserve.Output{Table: true, TableVersion: "v1beta1"}, Include: apiserve.IncludeWhole, NoHeaders: true, Now: t0})
	require.JSONEq(t, `{"kind":"Table","apiVersion":"meta.k8s.io/v1beta1","metadata":{"resourceVersion":"5"},"columnDefinitions":null,
		"rows":[{"cells":["l","me","0s"],"object":`+string(obj)+`}]}`, string(got))

	got = apiserve.AppendTable(nil, p, nil, apiserve.ListMeta{ResourceVersion: "5"}, apiserve.TableRequest{Include: apiserve.IncludeNone, NoHeaders: true})
	require.JSONEq(t, `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"columnDefinitions":null,"rows":[]}`, string(got))
}

// The metadata of a row is cut from the stored bytes whatever the place
// of managedFields among its keys.
func TestRowMetadataDropsManagedFieldsAnywhere(t *testing.T) {
	p := apiserve.PrinterFor("coordination.k8s.io", "leases")
	for _, meta := range []string{
		`{"managedFields":[{"manager":"m","fieldsV1":{"f:x":{}}}],"name":"l"}`,
		`{"name":"l","managedFields":[]}`,
		`{"name":"l", "managedFields" : [1] , "uid":"u"}`,
		`{"name":"l"}`,
	} {
		obj := []byte(`{"metadata":` + meta + `}`)
		got := apiserve.AppendTable(nil, p, [][]byte{obj}, apiserve.ListMeta{}, apiserve.TableRequest{})
		m := gjson.GetBytes(got, "rows.0.object.metadata")
		require.True(t, json.Valid([]byte(m.Raw)), m.Raw)
		require.False(t, m.Get("managedFields").Exists(), m.Raw)
		require.Equal(t, "l", m.Get("name").String())
	}
}
