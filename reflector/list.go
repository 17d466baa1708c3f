package reflector

import (
	"context"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
)

func (r *Reflector) baseOptions() httpwatch.ListOptions {
	return httpwatch.ListOptions{LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector}
}

// listVersion is the resourceVersion a list should read (conformance 12).
func (m *memory) listVersion() string {
	switch {
	case m.rvUnavailable:
		return ""
	case m.lastRV == "":
		return "0"
	default:
		return m.lastRV
	}
}

// pageSize applies client-go's page size rules (conformance 15).
func (r *Reflector) pageSize(m *memory, rv string) int64 {
	switch {
	case r.PageSize > 0:
		return r.PageSize
	case m.paginated:
		return 500
	case rv != "" && rv != "0":
		return -1 // one unpaginated read, servable from the watch cache (see ListAll)
	default:
		return 500
	}
}

func (r *Reflector) list(ctx context.Context, s *state) time.Duration {
	if !r.awaitRestore(ctx, s) {
		return 0
	}
	opts := r.baseOptions()
	opts.ResourceVersion = s.listVersion()
	opts.Limit = r.pageSize(&s.memory, opts.ResourceVersion)
	first := true
	page, err := httpwatch.ListAll(ctx, r.Source, opts, func(p *httpwatch.Page) {
		// Only a list at "0" that comes back in pages proves the watch
		// cache off: etcd (a list at "") always pages.
		if first && opts.ResourceVersion == "0" && p.Continue != "" {
			s.paginated = true
		}
		first = false
		r.stats.pages.Add(1)
	})
	if ctx.Err() != nil {
		return 0
	}
	if err != nil {
		r.report(OpList, err)
		if opts.ResourceVersion != "" && versionUnavailable(err) {
			s.rvUnavailable = true
			return 0
		}
		return r.retry(s, phaseStart, err)
	}
	if err := r.replace(page.Items, page.ResourceVersion); err != nil {
		r.report(OpSink, err)
		return r.retry(s, phaseStart, err)
	}
	r.synced(&s.memory, page.ResourceVersion, len(page.Items))
	s.enter(phaseWatch)
	return 0
}

// replace hands a full sync to the Sink. The version is published first:
// the Sink's consumer may report itself synced as soon as it holds the
// items, and whoever sees it synced must find LastSyncResourceVersion set.
// A refused Replace takes the publication back. The Sink is flushed after
// (see Flusher).
func (r *Reflector) replace(items []*raw.Object, rv string) error {
	defer r.flush()
	prev := r.LastSyncResourceVersion()
	r.publish(rv)
	if err := r.Sink.Replace(items, rv); err != nil {
		r.publish(prev)
		return err
	}
	return nil
}

// synced records a full sync (a list, or a watch-list's initial events) at
// rv: the version is known to exist again.
func (r *Reflector) synced(m *memory, rv string, items int) {
	m.lastRV = rv
	m.rvUnavailable = false
	m.unconfirmed = false // the server's own state replaced the restored one
	r.recovered()
	r.stats.lists.Add(1)
	r.stats.items.Add(int64(items))
}

// versionUnavailable reports a list or watch-list refused because the
// requested version is compacted away or not yet known to the server.
func versionUnavailable(err error) bool {
	return httpwatch.IsGone(err) || httpwatch.IsResourceVersionTooLarge(err)
}
