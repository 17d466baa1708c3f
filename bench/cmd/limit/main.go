// Command limit measures what this machine allows for the work the
// benchmark clients do: it reads the same list pages and the same watch
// burst from the fake server over HTTP, keeping nothing. With -scan (the
// default) it also runs encoding/json's validity scan over every byte once;
// without, it only reads, which no client can beat over the same connection.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"time"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/bench/internal/measure"
)

func main() {
	scan := flag.Bool("scan", true, "run json.Valid over every list page and event")
	flag.Parse() // and -host and -timeout, defined by measure
	ctx, cancel := context.WithTimeout(context.Background(), *measure.Timeout)
	defer cancel()
	rep, err := run(ctx, *measure.Host, *scan)
	if err != nil {
		fmt.Fprintf(os.Stderr, "limit: %v\n", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
}

func get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return resp, nil
}

func run(ctx context.Context, host string, scan bool) (*measure.Report, error) {
	info, err := measure.GetInfo(ctx, host)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	var page bytes.Buffer
	rv, cont, items := "0", "", 0
	for {
		q := url.Values{"limit": {"500"}}
		if cont != "" {
			q.Set("continue", cont)
		} else {
			q.Set("resourceVersion", rv)
		}
		resp, err := get(ctx, host+"/api/v1/pods?"+q.Encode())
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		page.Reset()
		_, err = page.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		if scan && !json.Valid(page.Bytes()) {
			return nil, errors.New("list: invalid JSON")
		}
		// The list's metadata comes first, so these stop reading early.
		rv = gjson.GetBytes(page.Bytes(), "metadata.resourceVersion").String()
		cont = gjson.GetBytes(page.Bytes(), "metadata.continue").String()
		items += 500
		if cont == "" {
			break
		}
	}
	syncTime := time.Since(began)
	syncCPU := measure.CPUSeconds()

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	resp, err := get(wctx, host+"/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion="+rv)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	defer resp.Body.Close()
	triggered := time.Now()
	if err := measure.Trigger(ctx, host); err != nil {
		return nil, err
	}
	if scan {
		err = scanEvents(resp.Body, info.Burst)
	} else {
		err = readEvents(resp.Body, info.Burst)
	}
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	eventsTime := time.Since(triggered)
	name := "limit (read + JSON scan)"
	if !scan {
		name = "limit (read only)"
	}
	return &measure.Report{
		Client: name, Pods: info.Pods, Burst: info.Burst,
		BytesPerObject:         info.BytesPerObject,
		ManagedFieldsPerObject: info.ManagedFieldsPerObject,
		SyncSeconds:            syncTime.Seconds(),
		EventsSeconds:          eventsTime.Seconds(),
		EventsPerSecond:        float64(info.Burst) / eventsTime.Seconds(),
		PeakRSSBytes:           measure.PeakRSS(),
		CPUSeconds:             measure.CPUSeconds(),
		SyncCPU:                syncCPU,
		EventsCPU:              measure.CPUSeconds() - syncCPU,
		GoVersion:              runtime.Version(),
		GOMAXPROCS:             runtime.GOMAXPROCS(0),
	}, nil
}

// readEvents reads the stream until it has seen burst events, counting the
// newlines the fake server ends each event with.
func readEvents(body io.Reader, burst int) error {
	buf := make([]byte, 64<<10)
	for seen := 0; seen < burst; {
		n, err := body.Read(buf)
		seen += bytes.Count(buf[:n], []byte{'\n'})
		if err != nil && seen < burst {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("after %d events: %w", seen, err)
		}
	}
	return nil
}

// scanEvents reads the stream line by line, checking that each line is
// valid JSON, until it has seen burst MODIFIED events.
func scanEvents(body io.Reader, burst int) error {
	br := bufio.NewReaderSize(body, 64<<10)
	modified := []byte(`{"type":"MODIFIED"`)
	for seen := 0; seen < burst; {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return errors.New("event longer than 64 KiB")
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("after %d events: %w", seen, err)
		}
		if !json.Valid(line) {
			return fmt.Errorf("event %d: invalid JSON", seen)
		}
		if bytes.HasPrefix(line, modified) {
			seen++
		}
	}
	return nil
}
