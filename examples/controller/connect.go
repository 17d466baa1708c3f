package main

import (
	"os"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/httpwatch/watchtest"
)

// connect chooses the server: --server, a kubeconfig, in-cluster, or else
// the embedded demo server, which it returns so the caller can close it.
func connect(o options) (cfg *httpwatch.Config, where string, demo *watchtest.Server, err error) {
	switch {
	case o.server != "":
		cfg = &httpwatch.Config{Host: o.server, BearerToken: o.token, BearerTokenFile: o.tokenFn, CAFile: o.ca, Insecure: o.insecure}
		return cfg, o.server, nil, nil
	case o.kubeconfig != "":
		cfg, err = httpwatch.LoadKubeconfig(o.kubeconfig, o.context)
	case o.context != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		cfg, err = httpwatch.FromEnvironment(o.context)
	default:
		s, err := startDemo()
		if err != nil {
			return nil, "", nil, err
		}
		return &httpwatch.Config{Host: s.URL}, s.URL + " (embedded demo server; --server or --kubeconfig for a real one)", s, nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	return cfg, cfg.Host, nil, nil
}
