package watchtest

import (
	"slices"
	"sort"
	"strings"

	"github.com/listwatch/listwatch/apiserve"
)

// change is one entry of a resource's history: what a watch from an older
// resourceVersion replays.
type change struct {
	typ  string
	obj  *object // the new state; for DELETED the last state at the deletion's RV
	prev *object // the state before; nil for ADDED
}

func (c *change) rv() int64 { return c.obj.rv }

// store holds one resource: every object's versions since the compaction,
// its history of changes, and its open watches. The Server's lock guards it.
type store struct {
	res    resource
	prefix []byte
	// versions maps a key to its versions, oldest first. A deleted object
	// ends with a tombstone; keys whose versions are all compacted away
	// are dropped.
	versions map[string][]*object
	sorted   []string // the keys of versions in order, valid unless dirty
	dirty    bool
	changes  []*change // in resourceVersion order
	// floor is this resource's own compaction point from the bounded
	// history: changes at or below it are gone.
	floor    int64
	watchers map[*watcher]struct{}
}

func newStore(r resource) *store {
	return &store{res: r, prefix: prefix(r), versions: map[string][]*object{}, watchers: map[*watcher]struct{}{}}
}

// current returns the live version of key, or nil.
func (st *store) current(key string) *object {
	vs := st.versions[key]
	if len(vs) == 0 || vs[len(vs)-1].tombstone {
		return nil
	}
	return vs[len(vs)-1]
}

// existing returns the live object ns/name, or the server's 404 for it.
func (st *store) existing(ns, name string) (*object, error) {
	o := st.current(objectKey(ns, name))
	if o == nil {
		return nil, notFound(st.res, name)
	}
	return o, nil
}

// at returns the version of key visible at resourceVersion rv, or nil.
func (st *store) at(key string, rv int64) *object {
	vs := st.versions[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].rv > rv })
	if i == 0 || vs[i-1].tombstone {
		return nil
	}
	return vs[i-1]
}

func (st *store) keys() []string {
	if st.dirty {
		st.sorted = st.sorted[:0]
		for k := range st.versions {
			st.sorted = append(st.sorted, k)
		}
		slices.Sort(st.sorted)
		st.dirty = false
	}
	return st.sorted
}

// record appends a change and its new version. It does not tell watchers.
func (st *store) record(c *change) {
	key := c.obj.key
	if _, ok := st.versions[key]; !ok {
		st.dirty = true
	}
	v := c.obj
	if c.typ == apiserve.Deleted {
		t := *c.obj
		t.tombstone = true
		v = &t
	}
	st.versions[key] = append(st.versions[key], v)
	st.changes = append(st.changes, c)
}

// limitHistory drops the oldest changes beyond limit (0: no limit), raising
// the resource's floor, the way a watch cache forgets.
func (st *store) limitHistory(limit int) {
	if limit <= 0 || len(st.changes) <= limit {
		return
	}
	drop := st.changes[:len(st.changes)-limit]
	st.floor = drop[len(drop)-1].rv()
	for _, c := range drop {
		st.trimKey(c.obj.key, st.floor)
	}
	st.changes = slices.Delete(st.changes, 0, len(drop))
}

// compact forgets everything at or below floor that no snapshot at or
// above floor needs.
func (st *store) compact(floor int64) {
	i := sort.Search(len(st.changes), func(i int) bool { return st.changes[i].rv() > floor })
	st.changes = slices.Delete(st.changes, 0, i)
	for key := range st.versions {
		st.trimKey(key, floor)
	}
}

// trimKey keeps, of the versions of key at or below floor, only the newest,
// which is the state at floor, and drops it too if it is a tombstone.
func (st *store) trimKey(key string, floor int64) {
	vs := st.versions[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].rv > floor })
	if i == 0 {
		return
	}
	keep := i - 1
	if vs[keep].tombstone {
		keep = i
	}
	vs = slices.Delete(vs, 0, keep)
	if len(vs) == 0 {
		delete(st.versions, key)
		st.dirty = true
		return
	}
	st.versions[key] = vs
}

// scope is what a list or watch asks for: a namespace (or all), perhaps one
// name, and selectors.
type scope struct {
	namespace string
	name      string
	filter    apiserve.Filter
}

// keyRange returns the first key position to look at and whether a key
// still belongs to the scope, using the sort order of "namespace/name".
func (st *store) keyRange(sc scope, start string) (int, func(string) bool) {
	keys := st.keys()
	from := start
	inScope := func(string) bool { return true }
	if sc.namespace != "" {
		p := sc.namespace + "/"
		if from < p {
			from = p
		}
		inScope = func(k string) bool { return strings.HasPrefix(k, p) }
	}
	return sort.SearchStrings(keys, from), inScope
}

// snapshot returns up to limit (0: all) objects in scope visible at rv, in
// key order from start, whether more follow, and how many (counted only
// when the scope has no selectors, as on the real server).
func (st *store) snapshot(sc scope, rv int64, start string, limit int) (items []*object, more bool, remaining int64) {
	keys := st.keys()
	i, inScope := st.keyRange(sc, start)
	count := sc.filter.Empty()
	for ; i < len(keys) && inScope(keys[i]); i++ {
		o := st.at(keys[i], rv)
		if o == nil || !sc.matches(o) {
			continue
		}
		if limit > 0 && len(items) == limit {
			more = true
			if !count {
				break
			}
			remaining++
			continue
		}
		items = append(items, o)
	}
	if !count {
		remaining = 0
	}
	return items, more, remaining
}

func (sc scope) matches(o *object) bool {
	if sc.namespace != "" && o.namespace != sc.namespace {
		return false
	}
	if sc.name != "" && o.name != sc.name {
		return false
	}
	return sc.filter.Matches(o.labels, o)
}
