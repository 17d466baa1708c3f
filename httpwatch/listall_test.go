package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/require"
)

// pager is an in-memory source of list pages: pages[i] answers the i-th
// call; an error in errs[i] is returned instead. It serves no watch.
type pager struct {
	pages []*Page
	errs  map[int]error
	calls []ListOptions
}

func (p *pager) Watch(context.Context, ListOptions) (Watcher, error) {
	return nil, errors.ErrUnsupported
}
func (p *pager) Info() SourceInfo { return SourceInfo{} }

func (p *pager) ListPage(_ context.Context, opts ListOptions) (*Page, error) {
	i := len(p.calls)
	p.calls = append(p.calls, opts)
	if err := p.errs[i]; err != nil {
		return nil, err
	}
	if i >= len(p.pages) {
		return nil, fmt.Errorf("unexpected call %d", i)
	}
	return p.pages[i], nil
}

func objs(t *testing.T, names ...string) []*raw.Object {
	var out []*raw.Object
	for _, n := range names {
		o, err := raw.NewObject([]byte(`{"metadata":{"name":"` + n + `"}}`))
		require.NoError(t, err)
		out = append(out, o)
	}
	return out
}

func itemNames(p *Page) []string {
	var out []string
	for _, o := range p.Items {
		out = append(out, o.Name())
	}
	return out
}

// conformance 14: pages follow continue; pages after the first send no
// resourceVersion; the default page size is 500.
func TestConformance14ListAllFollowsContinue(t *testing.T) {
	p := &pager{pages: []*Page{
		{Items: objs(t, "a", "b"), ResourceVersion: "10", Continue: "c1"},
		{Items: objs(t, "c", "d"), ResourceVersion: "10", Continue: "c2"},
		{Items: objs(t, "e"), ResourceVersion: "10"},
	}}
	var seen []int
	all, err := ListAll(context.Background(), p, ListOptions{ResourceVersion: "0", ResourceVersionMatch: "NotOlderThan", LabelSelector: "x=y"}, func(pg *Page) { seen = append(seen, len(pg.Items)) })
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, itemNames(all))
	require.Equal(t, "10", all.ResourceVersion)
	require.Empty(t, all.Continue)
	require.Equal(t, []int{2, 2, 1}, seen)
	require.Equal(t, []ListOptions{
		{ResourceVersion: "0", ResourceVersionMatch: "NotOlderThan", LabelSelector: "x=y", Limit: 500},
		{Continue: "c1", LabelSelector: "x=y", Limit: 500},
		{Continue: "c2", LabelSelector: "x=y", Limit: 500},
	}, p.calls)
}

// conformance 14: a page after the first failing with Expired falls back to
// one unpaginated list at the originally requested resourceVersion.
func TestConformance14ExpiredContinueFallsBackToFullList(t *testing.T) {
	expired := &StatusError{Code: 410, Reason: "Expired"}
	p := &pager{
		pages: []*Page{{Items: objs(t, "a"), ResourceVersion: "10", Continue: "c1"}, nil, {Items: objs(t, "a", "b", "c"), ResourceVersion: "12"}},
		errs:  map[int]error{1: fmt.Errorf("wrapped: %w", expired)},
	}
	all, err := ListAll(context.Background(), p, ListOptions{ResourceVersion: "5", ResourceVersionMatch: "NotOlderThan", Limit: 1}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, itemNames(all), "the partial result is dropped")
	require.Equal(t, "12", all.ResourceVersion)
	require.Equal(t, ListOptions{ResourceVersion: "5", ResourceVersionMatch: "NotOlderThan"}, p.calls[2])
}

func TestListAllErrors(t *testing.T) {
	// An expired first page is the caller's problem (the reflector relists).
	p := &pager{errs: map[int]error{0: &StatusError{Code: 410, Reason: "Expired"}}}
	_, err := ListAll(context.Background(), p, ListOptions{}, nil)
	require.True(t, expired(err))
	require.Len(t, p.calls, 1)

	// The first page's error is returned as it is: the caller says what
	// it was listing.
	boom := errors.New("boom")
	p = &pager{errs: map[int]error{0: boom}}
	_, err = ListAll(context.Background(), p, ListOptions{}, nil)
	require.Same(t, boom, err)

	// Other errors on later pages say which page.
	p = &pager{pages: []*Page{{Continue: "c"}}, errs: map[int]error{1: errors.New("boom")}}
	_, err = ListAll(context.Background(), p, ListOptions{}, nil)
	require.ErrorContains(t, err, "list page 2: boom")

	// The fallback failing is reported as such.
	p = &pager{pages: []*Page{{Continue: "c"}}, errs: map[int]error{1: &StatusError{Reason: "Expired"}, 2: errors.New("down")}}
	_, err = ListAll(context.Background(), p, ListOptions{}, nil)
	require.ErrorContains(t, err, "unpaginated list after an expired continue token: down")
}

// TestListAllSizesTheItemsOnce: the first page's remainingItemCount sizes
// the result once, so the pages are copied into it without growing it; a
// count no list could have (16 Mi items or more, zero or below) is not
// trusted with an allocation.
func TestListAllSizesTheItemsOnce(t *testing.T) {
	for _, c := range []struct {
		name      string
		remaining int64
		wantCap   int
	}{
		{"the server's count", 3, 5},
		{"none left, though a page follows", 0, 0},
		{"a count no list has", 1 << 24, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &pager{pages: []*Page{
				{Items: objs(t, "a", "b"), Continue: "c1", RemainingItemCount: &c.remaining},
				{Items: objs(t, "c", "d"), Continue: "c2"},
				{Items: objs(t, "e")},
			}}
			all, err := ListAll(context.Background(), p, ListOptions{}, nil)
			require.NoError(t, err)
			require.Len(t, all.Items, 5)
			if c.wantCap > 0 {
				require.Equal(t, c.wantCap, cap(all.Items), "one allocation, sized by the count")
			} else {
				require.NotEqual(t, int(c.remaining)+2, cap(all.Items), "not sized by the count")
			}
		})
	}
}

func TestListAllNegativeLimitIsUnpaginated(t *testing.T) {
	p := &pager{pages: []*Page{{Items: objs(t, "a")}}}
	_, err := ListAll(context.Background(), p, ListOptions{Limit: -1}, nil)
	require.NoError(t, err)
	require.Zero(t, p.calls[0].Limit)
}

// The recorded pages and expired-continue response, over HTTP.
func TestListAllOverHTTP(t *testing.T) {
	page1, page2 := fixtures.Load(t, "pod-list-page1.json"), fixtures.Load(t, "pod-list-page2.json")
	full, expired := fixtures.Load(t, "pod-list.json"), fixtures.Load(t, "list-expired-continue.json")
	for _, tc := range []struct {
		name    string
		second  fixtures.Response
		wantReq int
	}{
		{"continue", page2, 2},
		{"expired continue", expired, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				switch {
				case q.Get("continue") != "":
					tc.second.ServeHTTP(w, nil)
				case q.Get("limit") != "":
					page1.ServeHTTP(w, nil)
				default:
					full.ServeHTTP(w, nil)
				}
			})
			all, err := newTestClient(t, srv.URL).Resource(pods).List(context.Background(), ListOptions{ResourceVersion: "0"})
			require.NoError(t, err)
			require.Equal(t, []string{"web-1", "web-2", "web-3"}, itemNames(all))
			require.Equal(t, "75", all.ResourceVersion)
			seen := srv.Requests()
			require.Len(t, seen, tc.wantReq)
			require.Equal(t, "limit=500&resourceVersion=0", seen[0].URL.RawQuery)
			require.Equal(t, "continue="+page1Continue(t)+"&limit=500", seen[1].URL.RawQuery)
			if tc.wantReq == 3 {
				require.Equal(t, "resourceVersion=0", seen[2].URL.RawQuery)
			}
		})
	}
}

func page1Continue(t *testing.T) string {
	p, err := raw.NewObject(fixtures.Load(t, "pod-list-page1.json").Body)
	require.NoError(t, err)
	return p.Get("metadata.continue").String()
}
