package reflector

import (
	"context"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
)

func (r *Reflector) useWatchList() bool {
	if !r.WatchList {
		return false
	}
	if wl, ok := r.Source.(WatchListReporter); ok && !wl.SupportsWatchList() {
		return false // conformance 31
	}
	return true
}

func (r *Reflector) baseOptions() httpwatch.ListOptions {
	return httpwatch.ListOptions{LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector}
}

// listVersion is the resourceVersion a list should read (conformance 12).
func (r *Reflector) listVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.rvUnavailable:
		return ""
	case r.lastRV == "":
		return "0"
	default:
		return r.lastRV
	}
}

// pageSize applies client-go's page size rules (conformance 15).
func (r *Reflector) pageSize(rv string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.PageSize > 0:
		return r.PageSize
	case r.paginated:
		return 500
	case rv != "" && rv != "0":
		return -1 // one unpaginated read, servable from the watch cache (see ListAll)
	default:
		return 500
	}
}

func (r *Reflector) list(ctx context.Context) (state, time.Duration) {
	opts := r.baseOptions()
	opts.ResourceVersion = r.listVersion()
	opts.Limit = r.pageSize(opts.ResourceVersion)
	first := true
	page, err := httpwatch.ListAll(ctx, r.Source, opts, func(p *httpwatch.Page) {
		if first && opts.ResourceVersion == "0" && p.Continue != "" {
			r.mu.Lock()
			r.paginated = true
			r.mu.Unlock()
		}
		first = false
		r.stats.pages.Add(1)
	})
	if ctx.Err() != nil {
		return state{phase: phaseList}, 0
	}
	if err != nil {
		r.report("list", err)
		if opts.ResourceVersion != "" && versionUnavailable(err) {
			r.setVersionUnavailable()
			return state{phase: phaseList}, 0
		}
		return state{phase: phaseStart}, r.backoff(err)
	}
	if err := r.Sink.Replace(page.Items, page.ResourceVersion); err != nil {
		r.report("sink", err)
		return state{phase: phaseStart}, r.backoff(err)
	}
	r.synced(page.ResourceVersion, len(page.Items))
	return state{phase: phaseWatch}, 0
}

func (r *Reflector) synced(rv string, items int) {
	r.mu.Lock()
	r.lastRV = rv
	r.rvUnavailable = false
	r.mu.Unlock()
	r.stats.lists.Add(1)
	r.stats.items.Add(int64(items))
}

func (r *Reflector) setVersionUnavailable() {
	r.mu.Lock()
	r.rvUnavailable = true
	r.mu.Unlock()
}

// versionUnavailable reports a list or watch-list refused because the
// requested version is compacted away or not yet known to the server.
func versionUnavailable(err error) bool {
	return httpwatch.IsExpired(err) || httpwatch.IsGone(err) || httpwatch.IsResourceVersionTooLarge(err)
}
