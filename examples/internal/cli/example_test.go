package cli_test

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/kubeconfig"
)

func ExampleConnect() {
	var kf kubeconfig.Flags
	fs := flag.NewFlagSet("mycmd", flag.ContinueOnError)
	kf.Register(fs)
	if err := cli.Parse(fs, []string{"--server", "https://127.0.0.1:6443", "--token-file", "token"}); err != nil {
		log.Fatal(err)
	}

	startDemo := func(context.Context) (host string, closeFn func(), err error) {
		return "", nil, fmt.Errorf("not called: a flag names the server")
	}
	cfg, where, closeFn, err := cli.Connect(context.Background(), &kf, startDemo)
	if err != nil {
		log.Fatal(err)
	}
	defer closeFn()
	fmt.Println(where)
	fmt.Println(cfg.BearerTokenFile)
	// Output:
	// https://127.0.0.1:6443
	// token
}
