package demo

import (
	"encoding/json"
	"fmt"
)

// The demo world: pods are spread over Namespaces and three nodes, and
// their phases are drawn from Phases.
var (
	Namespaces = []string{"shop", "billing", "search"}
	Phases     = []string{"Pending", "Running", "Succeeded"}
)

// Place returns where pod number i lives: namespace Namespaces[i%3] and
// node node-(i%3+1), so each node holds the pods of one namespace.
func Place(i int) (namespace, node string) {
	return Namespaces[i%len(Namespaces)], fmt.Sprintf("node-%d", i%len(Namespaces)+1)
}

// Pod is one demo pod as a command last wrote it.
type Pod struct {
	Namespace, Name string
	Labels          map[string]string
	Node            string
	Phase           string
	// Containers is how many containers it runs, named c0, c1, ...;
	// 0 means one.
	Containers int
	// Restarts are all the first container's.
	Restarts int
	// Manager, if set, gives the pod a managedFields entry by that field
	// manager, for a command to show it can drop them.
	Manager string
}

type (
	podJSON struct {
		Metadata metaJSON   `json:"metadata"`
		Spec     specJSON   `json:"spec"`
		Status   statusJSON `json:"status"`
	}
	metaJSON struct {
		Name          string            `json:"name"`
		Namespace     string            `json:"namespace"`
		Labels        map[string]string `json:"labels,omitempty"`
		ManagedFields []managedJSON     `json:"managedFields,omitempty"`
	}
	managedJSON struct {
		Manager    string          `json:"manager"`
		Operation  string          `json:"operation"`
		APIVersion string          `json:"apiVersion"`
		FieldsType string          `json:"fieldsType"`
		FieldsV1   json.RawMessage `json:"fieldsV1"`
	}
	specJSON struct {
		NodeName   string          `json:"nodeName"`
		Containers []containerJSON `json:"containers"`
	}
	containerJSON struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	}
	statusJSON struct {
		Phase             string                `json:"phase"`
		ContainerStatuses []containerStatusJSON `json:"containerStatuses"`
	}
	containerStatusJSON struct {
		Name         string `json:"name"`
		Ready        bool   `json:"ready"`
		RestartCount int    `json:"restartCount"`
	}
)

// object is p in the shape of a Kubernetes pod, for json.Marshal.
func (p Pod) object() podJSON {
	o := podJSON{
		Metadata: metaJSON{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels},
		Spec:     specJSON{NodeName: p.Node},
		Status:   statusJSON{Phase: p.Phase},
	}
	if p.Manager != "" {
		o.Metadata.ManagedFields = []managedJSON{{
			Manager: p.Manager, Operation: "Update", APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: json.RawMessage(`{"f:status":{"f:phase":{}}}`),
		}}
	}
	for c := range max(p.Containers, 1) {
		name := fmt.Sprintf("c%d", c)
		restarts := 0
		if c == 0 {
			restarts = p.Restarts
		}
		o.Spec.Containers = append(o.Spec.Containers, containerJSON{Name: name, Image: "nginx:1.27"})
		o.Status.ContainerStatuses = append(o.Status.ContainerStatuses, containerStatusJSON{Name: name, Ready: true, RestartCount: restarts})
	}
	return o
}
