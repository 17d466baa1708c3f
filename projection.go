package listwatch

import (
	"log/slog"
	"slices"
	"sync/atomic"

	"github.com/listwatch/listwatch/httpwatch"
)

// projectionCheck looks once, at the first sync, for paths of the source's
// Projection that no cached object has (decision 22). Such a path is most
// likely misspelt ("status.phse"), and would otherwise read as empty for
// ever without a word. Only a *httpwatch.ResourceClient source says what
// it projects; a source wrapping one is not checked.
type projectionCheck struct {
	paths   []string // set as Run starts; nil: nothing to check
	checked bool     // only Run's goroutine touches paths and checked
	misses  atomic.Int64
}

func (p *projectionCheck) start(source httpwatch.ListerWatcher) {
	if rc, ok := source.(*httpwatch.ResourceClient); ok && rc.Projection != nil {
		p.paths = rc.Projection.Paths()
	}
}

// due reports whether the check is still to be made.
func (p *projectionCheck) due() bool { return !p.checked && len(p.paths) > 0 }

// check looks for the paths in the cache's objects once the first sync has
// reached it (the informer calls it while due and synced). An empty cache
// proves nothing about a path, so the check waits for an object.
func (p *projectionCheck) check(objs []*Object, log *slog.Logger, resource string) {
	if len(objs) == 0 {
		return
	}
	p.checked = true
	for _, path := range p.paths {
		if slices.ContainsFunc(objs, func(o *Object) bool { return o.Get(path).Exists() }) {
			continue
		}
		p.misses.Add(1)
		log.Warn("informer: projection path matches no cached object",
			"resource", resource, "path", path, "objects", len(objs),
			"hint", "check the path's spelling (gjson member names joined by dots, such as status.phase); if no object has the field yet, ignore this")
	}
}

func (p *projectionCheck) unmatched() int { return int(p.misses.Load()) }
