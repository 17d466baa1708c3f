// Package kubeconfig says how to reach an API server: its URL, the
// credentials to present and the TLS to trust, as kubectl would use them.
//
// A Config comes from a kubeconfig file (Load, with KUBECONFIG merged by
// kubectl's rules by FromEnvironment), from a pod's service account
// (InCluster), or is written by hand. It understands bearer tokens and token
// files re-read on rotation, basic authentication, client certificates,
// exec credential plugins (bounded in time and output, run once for all
// concurrent requests) and impersonation. Config.RoundTripper turns it into
// an http.RoundTripper that adds the credentials to requests for the
// configured server only; httpwatch.NewClient does that for you:
//
//	cfg, err := kubeconfig.FromEnvironment("") // KUBECONFIG, ~/.kube/config or in-cluster
//	if err != nil { ... }
//	client, err := httpwatch.NewClient(cfg)
//
// A command-line program takes kubectl's connection flags (--kubeconfig,
// --context, --server, --token-file, --ca) with Flags, and falls back to
// what FromEnvironment finds, in-cluster included:
//
//	var kf kubeconfig.Flags
//	kf.Register(flag.CommandLine)
//	flag.Parse()
//	cfg, err := kf.Load()
//
// Secrets never leave the process by accident: a Config prints, encodes to
// JSON and logs through log/slog with every secret redacted, errors never
// quote one, and credentials are never sent to a host a server redirects to.
package kubeconfig
