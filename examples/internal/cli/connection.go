package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/listwatch/listwatch/internal/redact"
	"github.com/listwatch/listwatch/kubeconfig"
)

// Demo starts a command's embedded demo server and returns its URL and
// the function that stops it.
type Demo func(context.Context) (host string, closeFn func(), err error)

// Connect chooses the server a command talks to: the one kf names
// (kubeconfig.Flags.Load: --server, --kubeconfig or --context, then
// $KUBECONFIG, then in-cluster), or, when nothing names one (no flag,
// $KUBECONFIG unset, not in a pod), the command's embedded demo server, so
// that the examples run anywhere. ~/.kube/config is not looked for without
// a flag: the demo wins over it.
//
// where says which server it chose, for the user, with any password in
// the URL hidden. closeFn stops the demo server; for any other server it
// does nothing, so callers can always defer it.
func Connect(ctx context.Context, kf *kubeconfig.Flags, demo Demo) (cfg *kubeconfig.Config, where string, closeFn func(), err error) {
	inPod := os.Getenv("KUBERNETES_SERVICE_HOST") != ""
	fromEnv := os.Getenv("KUBECONFIG") != ""
	if *kf == (kubeconfig.Flags{}) && !fromEnv && !inPod {
		host, closeFn, err := demo(ctx)
		if err != nil {
			return nil, "", nil, err
		}
		return &kubeconfig.Config{Host: host}, host + " (embedded demo server; --server or --kubeconfig for a real one)", closeFn, nil
	}
	cfg, err = kf.Load()
	flagged := kf.Server != "" || kf.Kubeconfig != "" || kf.Context != ""
	switch {
	case err != nil && !flagged && !fromEnv:
		return nil, "", nil, fmt.Errorf("in-cluster config (KUBERNETES_SERVICE_HOST is set): %w", err)
	case err != nil:
		return nil, "", nil, err
	}
	where = redact.URL(cfg.Host)
	switch {
	case flagged:
	case fromEnv:
		where += " (from $KUBECONFIG)"
	default:
		where += " (in-cluster)"
	}
	return cfg, where, func() {}, nil
}
