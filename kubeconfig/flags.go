package kubeconfig

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/listwatch/listwatch/internal/redact"
)

// Flags are the command-line flags that choose the API server a program
// talks to, as kubectl's do. Register them on a flag set, parse it, then
// Load:
//
//	var kf kubeconfig.Flags
//	kf.Register(flag.CommandLine)
//	flag.Parse()
//	cfg, err := kf.Load()
//
// The zero value is ready to use; a field set before Register is the flag's
// default. There is no flag for a token's value: a command line is readable
// by every user of the machine (ps, /proc), so a token comes from a file
// (--token-file, re-read when it rotates) or a kubeconfig.
type Flags struct {
	// Kubeconfig is the kubeconfig file to read (--kubeconfig).
	Kubeconfig string
	// Context is the kubeconfig context to use (--context); "" means the
	// current-context.
	Context string
	// Server is the API server's URL (--server), instead of a kubeconfig;
	// without a scheme it is https, as in kubectl.
	Server string
	// TokenFile holds the bearer token for Server (--token-file).
	TokenFile string
	// CA is the file of the certificates that verify Server (--ca).
	CA string
	// Insecure skips verifying Server's certificate
	// (--insecure-skip-tls-verify).
	Insecure bool
	// RequestTimeout bounds each attempt of a non-watch request
	// (--request-timeout, as kubectl's): Config.Timeout, whichever way the
	// server was chosen. Zero keeps Config's default, a minute.
	RequestTimeout time.Duration
}

// Register defines the flags on fs: --kubeconfig, --context, --server,
// --token-file, --ca, --insecure-skip-tls-verify and --request-timeout.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's service account)")
	fs.StringVar(&f.Context, "context", f.Context, "kubeconfig context (default: its current-context)")
	fs.StringVar(&f.Server, "server", f.Server, "API server URL instead of a kubeconfig, e.g. https://127.0.0.1:6443 (https when no scheme is given)")
	if f.Server != "" {
		fs.Lookup("server").DefValue = redact.URL(f.Server) // -h prints it
	}
	fs.StringVar(&f.TokenFile, "token-file", f.TokenFile, "file holding the bearer token for --server (re-read when it rotates)")
	fs.StringVar(&f.CA, "ca", f.CA, "file of the CA certificates that verify --server")
	fs.BoolVar(&f.Insecure, "insecure-skip-tls-verify", f.Insecure, "do not verify --server's certificate (testing only)")
	fs.DurationVar(&f.RequestTimeout, "request-timeout", f.RequestTimeout, "bound of each attempt of a request other than a watch, e.g. 30s (default 1m)")
}

// Load returns the Config the flags choose, the first of these that
// applies:
//
//  1. --server, with --token-file, --ca and --insecure-skip-tls-verify;
//  2. --kubeconfig, at --context or its current-context;
//  3. what kubectl would use (FromEnvironment): $KUBECONFIG, else
//     ~/.kube/config, at --context or the current-context; with neither,
//     the pod's service account (InCluster).
//
// Flags that cannot go together (--server with --kubeconfig or --context,
// --token-file, --ca or --insecure-skip-tls-verify without --server) are an
// error rather than one silently ignored. Errors name the flag at fault and
// never a credential; a password in --server is shown as xxxxx.
func (f *Flags) Load() (*Config, error) {
	home, _ := os.UserHomeDir()
	cfg, err := f.load(os.Getenv, home, InCluster)
	if err != nil {
		return nil, err
	}
	if f.RequestTimeout != 0 {
		cfg.Timeout = f.RequestTimeout
	}
	return cfg, nil
}

func (f *Flags) load(getenv func(string) string, home string, inCluster func() (*Config, error)) (*Config, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	switch {
	case f.Server != "":
		host := f.Server
		if !strings.Contains(host, "://") {
			host = "https://" + host
		}
		return &Config{Host: host, BearerTokenFile: f.TokenFile, CAFile: f.CA, Insecure: f.Insecure}, nil
	case f.Kubeconfig != "":
		cfg, err := Load(f.Kubeconfig, f.Context)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", f.Kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := fromEnvironment(f.Context, getenv, home, inCluster)
	if errors.Is(err, ErrNotInCluster) {
		return nil, fmt.Errorf("no API server given: use --kubeconfig or --server (%w)", err)
	}
	return cfg, err
}

// check rejects flags that cannot go together.
func (f *Flags) check() error {
	if f.Server != "" {
		if f.Kubeconfig != "" || f.Context != "" {
			return fmt.Errorf("--server %s with --kubeconfig or --context: give one or the other", redact.URL(f.Server))
		}
		return nil
	}
	for _, s := range []struct {
		name string
		set  bool
	}{{"--token-file", f.TokenFile != ""}, {"--ca", f.CA != ""}, {"--insecure-skip-tls-verify", f.Insecure}} {
		if s.set {
			return fmt.Errorf("%s goes with --server (a kubeconfig names its own)", s.name)
		}
	}
	return nil
}
