package kubeconfig

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotInCluster is returned by InCluster, and wrapped by
// FromEnvironment when it finds no kubeconfig either, when the process is not
// in a pod: KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is unset.
var ErrNotInCluster = errors.New("not running in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set")

// serviceAccountDir is where the kubelet mounts a pod's service-account
// token, CA bundle and namespace.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster describes the API server as seen from inside a pod: the
// service address from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT,
// the pod's service-account token (as BearerTokenFile, so the rotating
// projected token is re-read), its CA bundle, and its namespace
// (POD_NAMESPACE if set, else the mounted namespace file, else "default").
func InCluster() (*Config, error) {
	return inClusterConfig("/", os.Getenv)
}

// inClusterConfig reads the service-account files under root, so tests can
// lay out a fake pod filesystem.
func inClusterConfig(root string, getenv func(string) string) (*Config, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, ErrNotInCluster
	}
	dir := filepath.Join(root, serviceAccountDir)
	token, ca := filepath.Join(dir, "token"), filepath.Join(dir, "ca.crt")
	for _, f := range []string{token, ca} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("in-cluster config: the pod's service account is not mounted (automountServiceAccountToken: false?): %w", err)
		}
	}
	ns := getenv("POD_NAMESPACE")
	if ns == "" {
		b, err := os.ReadFile(filepath.Join(dir, "namespace"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("in-cluster config: read namespace: %w", err)
		}
		ns = strings.TrimSpace(string(b))
	}
	if ns == "" {
		ns = "default"
	}
	return &Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		Namespace:       ns,
		BearerTokenFile: token,
		CAFile:          ca,
	}, nil
}
