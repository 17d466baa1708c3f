package kubeconfig_test

import (
	"flag"
	"fmt"
	"log"

	"github.com/listwatch/listwatch/kubeconfig"
)

// A program's connection flags in three lines. Here the flag set parses a
// fixed command line; a program passes flag.CommandLine and calls
// flag.Parse().
func ExampleFlags() {
	var kf kubeconfig.Flags
	fs := flag.NewFlagSet("mycmd", flag.ExitOnError)
	kf.Register(fs)
	if err := fs.Parse([]string{"--server", "https://127.0.0.1:6443", "--token-file", "/var/run/token", "--ca", "ca.crt"}); err != nil {
		log.Fatal(err)
	}
	cfg, err := kf.Load()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Host, cfg.BearerTokenFile, cfg.CAFile)
	// Output:
	// https://127.0.0.1:6443 /var/run/token ca.crt
}
