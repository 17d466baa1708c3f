// Command chaos measures how long listwatch and client-go take to bring an
// informer's cache back to the server's state after each fault that
// toxiproxy puts between them and a real kube-apiserver, each client with
// its defaults, over HTTP/2 and over HTTP/1.1.
//
//	scripts/realapi.sh build && eval "$(scripts/realapi.sh start)"
//	(cd bench && go run ./cmd/chaos)          # prints a Markdown table
//	scripts/realapi.sh stop "$REALAPI_DIR"
//
// Four informers of the same 1,000 configmaps run at once: listwatch and
// client-go's dynamic informer, each over TLS with HTTP/2 and over TLS with
// HTTP/1.1 only. They reach the server through a small router that sends
// each new connection to a toxiproxy proxy ("held"); a writer on a direct
// path changes the configmaps while a fault lasts. A path fault puts its
// toxics on every connection; the held black hole (the one a real network
// makes) silences the connections the clients hold and routes new ones
// through a clean proxy. For each fault and client: the time from the end
// of the fault (from its start for the black holes) until the cache equals
// the server's state.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"time"
)

var debug = flag.Bool("debug", false, "log what the listwatch informers do, at Debug, on stderr")

func main() {
	hold := flag.Duration("hold", 20*time.Second, "how long each path fault lasts")
	hole := flag.Duration("hole", 30*time.Second, "how long the whole-path black hole lasts")
	limit := flag.Duration("limit", 4*time.Minute, "give up waiting for a client after this long")
	only := flag.String("only", "", "run only the faults of these names, separated by |")
	flag.Parse()
	// Both clients sync by a paged list (client-go reads this once).
	if _, set := os.LookupEnv("KUBE_FEATURE_WatchListClient"); !set {
		os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	}
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	if err := run(*hold, *hole, *limit, *only); err != nil {
		log.Fatal(err)
	}
}

func run(hold, hole, limit time.Duration, only string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lab, err := newLab(ctx)
	if err != nil {
		return err
	}
	defer lab.close()
	var rows []row
	for _, f := range faults(hold, hole) {
		if only != "" && !slices.Contains(strings.Split(only, "|"), f.name) {
			continue
		}
		r, err := lab.measure(ctx, f, limit)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		log.Printf("%s: %v", f.name, r.took)
		rows = append(rows, r)
	}
	printTable(os.Stdout, lab.observers, rows, limit)
	return nil
}
