package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/httpwatch/watchtest"
)

// connect chooses the server: flags, in-cluster, or else the embedded demo
// server, which it returns so the caller can close it. Flags win over the
// pod's environment so an agent can be pointed elsewhere for debugging.
func connect(o options) (cfg *httpwatch.Config, where string, demo *watchtest.Server, err error) {
	switch {
	case o.server != "":
		cfg = &httpwatch.Config{Host: o.server, BearerToken: o.token, BearerTokenFile: o.tokenFn, CAFile: o.ca, Insecure: o.insecure}
		return cfg, o.server, nil, nil
	case o.kubeconfig != "":
		if cfg, err = httpwatch.LoadKubeconfig(o.kubeconfig, o.context); err != nil {
			return nil, "", nil, err
		}
		return cfg, cfg.Host, nil, nil
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		if cfg, err = httpwatch.InClusterConfig(); err != nil {
			return nil, "", nil, fmt.Errorf("in-cluster config (KUBERNETES_SERVICE_HOST is set): %w", err)
		}
		return cfg, cfg.Host + " (in-cluster)", nil, nil
	}
	s, err := startDemo()
	if err != nil {
		return nil, "", nil, err
	}
	return &httpwatch.Config{Host: s.URL}, s.URL + " (embedded demo server; --server or --kubeconfig for a real one)", s, nil
}

// explain turns the first error into one line a person can act on.
func explain(err error, host string) error {
	switch {
	case httpwatch.IsUnauthorized(err):
		return fmt.Errorf("the server at %s did not accept the credentials (401 Unauthorized): check --token, --token-file or the kubeconfig user", host)
	case httpwatch.IsForbidden(err):
		return fmt.Errorf("not allowed to list and watch pods (403 Forbidden): the agent's service account needs get, list and watch on pods: %w", err)
	case httpwatch.IsConnectionRefused(err) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cannot reach the server at %s: %w", host, err)
	}
	return err
}
