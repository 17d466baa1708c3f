package httpwatch

import (
	"net/http"
	"strings"
	"time"
)

// RequestInfo describes one attempt of a request, what was asked and how
// it ended, for Client.Metrics.
type RequestInfo struct {
	// Verb is the API server's name for the request: get, list, watch,
	// create, update, patch, delete or deletecollection.
	Verb string
	// Resource is the resource, qualified by its group unless it is core,
	// with the subresource after a slash: "pods", "deployments.apps",
	// "pods/status". Empty for paths outside resources (discovery).
	Resource string
	// Code is the response's status code, 0 when there was none.
	Code int
	// Latency runs from sending the request to its response headers (for
	// a watch, to the stream opening), without the client-side rate
	// limiter's wait.
	Latency time.Duration
	// Err is the transport's error when there was no response.
	Err error
}

// measured observes every attempt for Client.Metrics and logs the failed
// ones at Debug on Client.Logger.
type measured struct {
	next http.RoundTripper
	c    *Client
}

func (m *measured) RoundTrip(req *http.Request) (*http.Response, error) {
	start := m.c.clock.Now()
	resp, err := m.next.RoundTrip(req)
	info := RequestInfo{Latency: m.c.clock.Since(start), Err: err}
	if err != nil {
		err = m.c.explainLost(err)
	}
	if resp != nil {
		info.Code = resp.StatusCode
		m.c.watchLost(resp)
	}
	if m.c.Metrics != nil || failed(info) {
		info.Verb, info.Resource = describe(req, m.c.host.Path)
	}
	if m.c.Metrics != nil {
		m.c.Metrics(info)
	}
	if failed(info) && m.c.Logger != nil {
		// The path, never the query or headers: nothing secret is logged.
		m.c.Logger.Debug("httpwatch: request attempt failed", "verb", info.Verb, "resource", info.Resource,
			"path", req.URL.Path, "code", info.Code, "err", err)
	}
	return resp, err
}

func (m *measured) CloseIdleConnections() {
	if ci, ok := m.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// failed reports an attempt the client may retry or report.
func failed(info RequestInfo) bool {
	return info.Err != nil || info.Code == http.StatusTooManyRequests || info.Code >= 500
}

// describe names a request's verb and resource as the API server does
// (see parseRequest). prefix is the path of the configured host (a
// proxy's), which comes first.
func describe(req *http.Request, prefix string) (verb, resource string) {
	method := req.Method
	if w := req.URL.Query().Get("watch"); method == http.MethodGet && w != "" && w != "0" && w != "false" {
		method = "WATCH"
	}
	verb, resource, _ = parseRequest(method, strings.TrimPrefix(req.URL.Path, strings.TrimSuffix(prefix, "/")))
	return verb, resource
}

// parseRequest names a request as the API server and RBAC do, from its
// method (WATCH for a watch) and its path
// /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]] or /apis/GROUP/VERSION/...:
// its verb, its resource qualified by group and subresource ("pods",
// "deployments.apps/status"), and its namespace. A path outside resources
// has no resource, and the method, in lower case, as its verb.
func parseRequest(method, path string) (verb, resource, namespace string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return strings.ToLower(method), "", ""
	}
	// The namespaces resource's own subresources look like a namespaced
	// path with no resource: /api/v1/namespaces/NAME/status.
	if len(parts) >= 3 && parts[0] == "namespaces" && !(len(parts) == 3 && (parts[2] == "status" || parts[2] == "finalize")) {
		namespace, parts = parts[1], parts[2:]
	}
	resource = parts[0]
	if group != "" {
		resource += "." + group
	}
	named := len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	return verbOf(method, named), resource, namespace
}

func verbOf(method string, named bool) string {
	switch method {
	case http.MethodGet:
		if named {
			return "get"
		}
		return "list"
	case "WATCH":
		return "watch"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(method)
}
