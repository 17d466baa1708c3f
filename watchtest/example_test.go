package watchtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

func Example() {
	s := watchtest.NewServer()
	defer s.Close()

	_, _ = s.Create(watchtest.Pods, `{"metadata":{"name":"web-1","namespace":"prod","labels":{"app":"web"}}}`)
	_, _ = s.Create(watchtest.Pods, `{"metadata":{"name":"db-1","namespace":"prod","labels":{"app":"db"}}}`)

	resp, err := s.Client().Get(s.URL + "/api/v1/namespaces/prod/pods?labelSelector=app%3Dweb")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var list struct {
		Kind     string
		Metadata struct{ ResourceVersion string }
		Items    []struct {
			Metadata struct{ Name, ResourceVersion string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode, list.Kind, "at resourceVersion", list.Metadata.ResourceVersion)
	for _, it := range list.Items {
		fmt.Println(it.Metadata.Name, it.Metadata.ResourceVersion)
	}
	// Output:
	// 200 PodList at resourceVersion 3
	// web-1 2
}

func ExampleServer_FailNext() {
	s := watchtest.NewServer()
	defer s.Close()

	s.FailNext(watchtest.Failure{Code: http.StatusTooManyRequests, RetryAfter: time.Second, Verbs: []string{"list"}})
	for range 2 {
		resp, err := s.Client().Get(s.URL + "/api/v1/pods")
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Output:
	// 429 1
	// 200
}

func ExampleServer_CutNextWatchAfterEvents() {
	s := watchtest.NewServer()
	defer s.Close()
	from := s.ResourceVersion()
	_, _ = s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"prod"}}`)
	_, _ = s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"b","namespace":"prod"}}`)

	s.CutNextWatchAfterEvents(1)
	resp, err := s.Client().Get(s.URL + "/api/v1/namespaces/prod/configmaps?watch=1&resourceVersion=" + from)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var e struct {
			Type   string
			Object struct{ Metadata struct{ Name string } }
		}
		if err := dec.Decode(&e); err != nil {
			fmt.Println("stream:", err)
			break
		}
		fmt.Println(e.Type, e.Object.Metadata.Name)
	}
	// Output:
	// ADDED a
	// stream: unexpected EOF
}

func ExampleServer_Compact() {
	s := watchtest.NewServer()
	defer s.Close()
	from := s.ResourceVersion()
	_, _ = s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"prod"}}`)
	_ = s.Compact(s.ResourceVersion())

	resp, err := s.Client().Get(s.URL + "/api/v1/pods?watch=1&resourceVersion=" + from)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var e struct {
		Type   string
		Object struct {
			Reason string
			Code   int
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	fmt.Println(resp.StatusCode, e.Type, e.Object.Code, e.Object.Reason)
	// Output: 200 ERROR 410 Expired
}

// A controller's write: a merge patch that sets one label, sent as any
// client sends it. The answer is the stored object at its new
// resourceVersion, and watches see one MODIFIED event.
func ExampleServer_patch() {
	s := watchtest.NewServer()
	defer s.Close()
	_, _ = s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"app","namespace":"prod","labels":{"tier":"web"}}}`)

	req, _ := http.NewRequest(http.MethodPatch, s.URL+"/api/v1/namespaces/prod/configmaps/app",
		strings.NewReader(`{"metadata":{"labels":{"owner":"team-a"}}}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := s.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var cm struct {
		Metadata struct {
			ResourceVersion string
			Labels          map[string]string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&cm); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode, cm.Metadata.ResourceVersion, cm.Metadata.Labels)
	// Output: 200 3 map[owner:team-a tier:web]
}

// One httpwatch.Resource addresses a resource for the server's Go methods
// and for a client; AddResource serves a custom resource as its Definition
// says.
func ExampleServer_AddResource() {
	s := watchtest.NewServer()
	defer s.Close()
	widgets := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "widgets"}
	s.AddResource(widgets, watchtest.Definition{Kind: "Widget", Namespaced: true})
	_, _ = s.Create(widgets, `{"metadata":{"name":"w","namespace":"prod"},"spec":{"size":2}}`)

	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := c.Resource(widgets).Namespace("prod").Get(context.Background(), "w")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(widgets, w.Kind(), w.Name(), w.Get("spec.size"))
	// Output: widgets.v1.example.com Widget w 2
}
