package main

import (
	"fmt"
	"strings"

	"github.com/listwatch/listwatch/httpwatch"
)

// wellKnown maps the plurals people type most to their group and version,
// so "deployments" works without ".v1.apps".
var wellKnown = map[string]httpwatch.Resource{
	"deployments":               {Group: "apps", Version: "v1"},
	"replicasets":               {Group: "apps", Version: "v1"},
	"statefulsets":              {Group: "apps", Version: "v1"},
	"daemonsets":                {Group: "apps", Version: "v1"},
	"jobs":                      {Group: "batch", Version: "v1"},
	"cronjobs":                  {Group: "batch", Version: "v1"},
	"ingresses":                 {Group: "networking.k8s.io", Version: "v1"},
	"leases":                    {Group: "coordination.k8s.io", Version: "v1"},
	"customresourcedefinitions": {Group: "apiextensions.k8s.io", Version: "v1"},
}

// parseResource reads plural[.version[.group]]: "pods" and "pods.v1" are in
// the core group, "deployments.v1.apps" and "widgets.v1.example.com" name
// their group.
func parseResource(s string) (httpwatch.Resource, error) {
	parts := strings.SplitN(s, ".", 3)
	r := httpwatch.Resource{Resource: parts[0], Version: "v1"}
	if r.Resource == "" {
		return r, fmt.Errorf("resource %q: empty plural (want plural[.version[.group]])", s)
	}
	if len(parts) == 1 {
		if k, ok := wellKnown[r.Resource]; ok {
			r.Group, r.Version = k.Group, k.Version
		}
		return r, nil
	}
	r.Version = parts[1]
	if !strings.HasPrefix(r.Version, "v") {
		return r, fmt.Errorf("resource %q: %q is not a version like v1 (want plural[.version[.group]])", s, r.Version)
	}
	if len(parts) == 3 {
		r.Group = parts[2]
	}
	return r, nil
}
