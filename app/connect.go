package app

import (
	"context"
	"fmt"
	"os"

	"github.com/listwatch/listwatch/internal/redact"
	"github.com/listwatch/listwatch/kubeconfig"
)

// connect chooses the server as kubeconfig.Flags.Load does: the one kf
// names (--server, --kubeconfig, --context), else $KUBECONFIG, else
// ~/.kube/config, else the pod's service account; with Demo set, the demo server
// when no flag, no $KUBECONFIG and no pod names one, so ~/.kube/config is
// never used by surprise by a demo. where says which, any password in the
// URL hidden; stop stops the demo (and does nothing otherwise).
func (a *App) connect(ctx context.Context, kf *kubeconfig.Flags) (cfg *kubeconfig.Config, where string, stop func(), err error) {
	if a.Config != nil {
		return a.Config, redact.URL(a.Config.Host), func() {}, nil
	}
	flagged := kf.Server != "" || kf.Kubeconfig != "" || kf.Context != ""
	fromEnv := os.Getenv("KUBECONFIG") != ""
	inPod := os.Getenv("KUBERNETES_SERVICE_HOST") != ""
	if a.Demo != nil && !flagged && !fromEnv && !inPod {
		url, stop, err := a.Demo(ctx)
		if err != nil {
			return nil, "", nil, fmt.Errorf("start the demo server: %w", err)
		}
		return &kubeconfig.Config{Host: url}, url + " (embedded demo server; --server or --kubeconfig for a real one)", stop, nil
	}
	cfg, err = kf.Load()
	if err != nil {
		return nil, "", nil, err
	}
	where = redact.URL(cfg.Host)
	switch {
	case flagged:
	case fromEnv:
		where += " (from $KUBECONFIG)"
	case inPod:
		where += " (in-cluster)"
	}
	return cfg, where, func() {}, nil
}
