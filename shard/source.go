package shard

import (
	"context"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/store"
)

// Source returns lw filtered to the keys this member owns by its current
// view ("namespace/name", as listwatch.Key): lists drop the objects of other
// members' keys and watches skip their events. An informer built on it
// caches and notifies only this member's keys; relist it in OnChange, so
// keys gained are listed (and reach handlers as adds) and keys lost leave
// the cache (as deletes with finalStateUnknown).
func (m *Member) Source(lw httpwatch.ListerWatcher) httpwatch.ListerWatcher {
	return &source{lw: lw, m: m}
}

type source struct {
	lw httpwatch.ListerWatcher
	m  *Member
}

func (s *source) owns(o *raw.Object) bool {
	return s.m.Owns(store.JoinKey(o.Namespace(), o.Name()))
}

func (s *source) ListPage(ctx context.Context, opts httpwatch.ListOptions) (*httpwatch.Page, error) {
	p, err := s.lw.ListPage(ctx, opts)
	if err != nil || p == nil {
		return p, err
	}
	out := *p
	out.Items = make([]*raw.Object, 0, len(p.Items))
	for _, o := range p.Items {
		if s.owns(o) {
			out.Items = append(out.Items, o)
		}
	}
	return &out, nil
}

func (s *source) Watch(ctx context.Context, opts httpwatch.ListOptions) (httpwatch.Watcher, error) {
	w, err := s.lw.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &watcher{Watcher: w, s: s}, nil
}

// Info is the wrapped source's: the member reads the same resource.
func (s *source) Info() httpwatch.SourceInfo { return s.lw.Info() }

// watcher passes NotifyRead on to the wrapped watcher: the events it skips
// are read with the others, so its reads are the wrapped one's.
type watcher struct {
	httpwatch.Watcher
	s *source
}

// Next skips the events of objects other members own; bookmarks and
// errors pass.
func (w *watcher) Next() (httpwatch.Event, error) {
	for {
		e, err := w.Watcher.Next()
		if err != nil || e.Object == nil || e.Err != nil ||
			(e.Type != httpwatch.Added && e.Type != httpwatch.Modified && e.Type != httpwatch.Deleted) || w.s.owns(e.Object) {
			return e, err
		}
	}
}
