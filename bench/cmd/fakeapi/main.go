// Command fakeapi is a stand-in Kubernetes API server for benchmarks: it
// serves LIST and WATCH of pods that look like real ones (about 3.9 KB of
// JSON each), all rendered before it starts listening, so that writing a
// response is copying bytes and the server is never what a client waits on.
//
//	fakeapi -addr 127.0.0.1:18080 -pods 10000 -burst 10000
//
// Endpoints:
//
//	GET  /api/v1/pods, /api/v1/namespaces/{ns}/pods
//	     LIST with limit and continue; WATCH with ?watch=1, resourceVersion,
//	     allowWatchBookmarks, sendInitialEvents and timeoutSeconds.
//	POST /bench/burst  releases the burst of MODIFIED events on every watch
//	     waiting for it (with -trigger, the default).
//	GET  /bench/info   the data set: pod count, mean bytes per pod, ...
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	n := flag.Int("pods", 10000, "number of pods")
	namespaces := flag.Int("namespaces", 50, "number of namespaces the pods are spread over")
	burst := flag.Int("burst", 10000, "MODIFIED events sent on each watch")
	trigger := flag.Bool("trigger", true, "hold each watch's burst until POST /bench/burst")
	flag.Parse()
	if *n < 1 || *namespaces < 1 || *burst < 0 {
		fmt.Fprintln(os.Stderr, "fakeapi: -pods and -namespaces must be positive, -burst not negative")
		os.Exit(2)
	}

	start := time.Now()
	pods, err := renderPods(*n, *namespaces)
	if err != nil {
		log.Fatalf("fakeapi: %v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("fakeapi: %v", err)
	}
	log.Printf("fakeapi: %d pods rendered in %v, serving on http://%s", *n, time.Since(start).Round(time.Millisecond), ln.Addr())
	srv := &http.Server{Handler: newServer(pods, *burst, *trigger).routes(), ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("fakeapi: %v", err)
	}
}
