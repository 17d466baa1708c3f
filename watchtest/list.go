package watchtest

import (
	"context"
	"net/http"

	"github.com/listwatch/listwatch/apiserve"
)

// serveList hands a list to the serving core, over the resource's store
// narrowed to the list's scope.
func (s *Server) serveList(w http.ResponseWriter, req *http.Request, st *store, sc scope, q apiserve.ListQuery, table *apiserve.TableOutput) {
	apiserve.ServeList(req.Context(), w, coreStore{s: s, st: st, sc: sc}, q, st.res.layout(), table)
}

// coreStore is a resource's store as the serving core reads it.
type coreStore struct {
	s  *Server
	st *store
	sc scope
}

func (c coreStore) WaitFor(ctx context.Context, rv int64) (int64, bool) {
	return c.s.waitForRV(ctx, rv)
}

func (c coreStore) Read(f func(apiserve.View)) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	f(c)
}

// The View of the store: the Server's lock is held.

func (c coreStore) ResourceVersion() int64 { return c.s.rv }

func (c coreStore) Floor() int64 { return c.s.floorOf(c.st) }

func (c coreStore) List(rv int64, start string, limit int) ([]apiserve.Item, bool, int64) {
	objs, more, remaining := c.st.snapshot(c.sc, rv, start, limit)
	return items(objs), more, remaining
}

// items are objects as the serving core writes them.
func items(objs []*object) []apiserve.Item {
	out := make([]apiserve.Item, len(objs))
	for i, o := range objs {
		out[i] = apiserve.Item{Key: o.key, Body: o.body}
	}
	return out
}
