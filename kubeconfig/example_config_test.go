package kubeconfig_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/listwatch/listwatch/kubeconfig"
)

func ExampleLoad() {
	dir, err := os.MkdirTemp("", "kubeconfig")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config")
	os.WriteFile(path, []byte(`
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://dev.example.com:6443
    insecure-skip-tls-verify: true
users:
- name: dev
  user:
    token: s3cr3t
contexts:
- name: dev
  context:
    cluster: dev
    user: dev
    namespace: team-a
`), 0o600)

	cfg, err := kubeconfig.Load(path, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Host, cfg.Namespace)
	fmt.Println(cfg) // secrets never print

	_, err = kubeconfig.Load(path, "prod")
	fmt.Println(errors.Is(err, kubeconfig.ErrNoContext))
	// Output:
	// https://dev.example.com:6443 team-a
	// {Host:https://dev.example.com:6443 Namespace:team-a BearerToken:<redacted> Insecure:true}
	// true
}

func ExampleConfig_Rate() {
	for _, cfg := range []kubeconfig.Config{{}, {QPS: 200, Burst: 400}, {QPS: -1}} {
		qps, burst := cfg.Rate()
		fmt.Println(qps, burst)
	}
	// Output:
	// 50 100
	// 200 400
	// +Inf 0
}

func ExampleFromEnvironment() {
	cfg, err := kubeconfig.FromEnvironment("") // what kubectl would use
	if err != nil {
		log.Fatal(err)
	}
	rt, err := cfg.RoundTripper()
	if err != nil {
		log.Fatal(err)
	}
	_ = rt // give it to an http.Client; httpwatch.NewClient(cfg) does
}
