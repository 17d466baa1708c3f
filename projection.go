package listwatch

import (
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

// afterPop checks the cache once the first sync has reached it. An empty
// cache proves nothing about a path, so the check waits for an object.
func (p *projectionCheck) afterPop(inf *Informer) {
	if p.checked || len(p.paths) == 0 || !inf.HasSynced() {
		return
	}
	objs := inf.indexer.List()
	if len(objs) == 0 {
		return
	}
	p.checked = true
	for _, path := range p.paths {
		if slices.ContainsFunc(objs, func(o *Object) bool { return o.Get(path).Exists() }) {
			continue
		}
		p.misses.Add(1)
		inf.logger().Warn("informer: projection path matches no cached object",
			"resource", inf.reflector.Name, "path", path, "objects", len(objs),
			"hint", "check the path's spelling (gjson member names joined by dots, such as status.phase); if no object has the field yet, ignore this")
	}
}

func (p *projectionCheck) unmatched() int { return int(p.misses.Load()) }
