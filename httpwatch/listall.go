package httpwatch

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/raw"
)

// defaultPageSize is the page size ListAll asks for when opts.Limit is 0, as
// client-go's pager does.
const defaultPageSize = 500

// ListAll reads a whole list through l, one page at a time, following
// continue tokens to the end, and returns every item with the list's
// resourceVersion. opts.Limit 0 means 500 items a page; a negative Limit asks
// for the whole list in one unpaginated request. Pages after the first send
// only the continue token: resourceVersion and resourceVersionMatch are
// cleared, as the server requires.
//
// If a page after the first fails because its continue token expired (410
// Expired, typically after etcd compaction during a long list), ListAll
// drops what it has and makes one unpaginated request at the originally
// requested resourceVersion (conformance 14).
//
// onPage, if not nil, is called after every page, for progress; the page's
// items are also in the result.
//
// The client-side rate limiter is paid by the first page only (decision
// 34); the pages that follow it are not charged again.
func ListAll(ctx context.Context, l ListerWatcher, opts ListOptions, onPage func(*Page)) (*Page, error) {
	orig := opts
	switch {
	case opts.Limit == 0:
		opts.Limit = defaultPageSize
	case opts.Limit < 0:
		opts.Limit = 0
	}
	all := &Page{}
	pageCtx := ctx
	for n := 1; ; n++ {
		page, err := l.ListPage(pageCtx, opts)
		if err != nil {
			if n > 1 && expired(err) {
				return fullList(ctx, l, orig, onPage)
			}
			if n > 1 {
				return nil, fmt.Errorf("list page %d: %w", n, err)
			}
			return nil, err
		}
		if onPage != nil {
			onPage(page)
		}
		if n == 1 {
			if page.Continue == "" {
				return page, nil // one page: no copy of the item slice
			}
			if r := page.RemainingItemCount; r != nil && *r > 0 && *r < 1<<24 {
				all.Items = make([]*raw.Object, 0, len(page.Items)+int(*r))
			}
		}
		all.Items = append(all.Items, page.Items...)
		all.ResourceVersion = page.ResourceVersion
		if page.Continue == "" {
			return all, nil
		}
		opts.Continue = page.Continue
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
		pageCtx = context.WithValue(ctx, continuation{}, true)
	}
}

func fullList(ctx context.Context, l ListerWatcher, orig ListOptions, onPage func(*Page)) (*Page, error) {
	orig.Limit, orig.Continue = 0, ""
	page, err := l.ListPage(ctx, orig)
	if err != nil {
		return nil, fmt.Errorf("unpaginated list after an expired continue token: %w", err)
	}
	if onPage != nil {
		onPage(page)
	}
	return page, nil
}

// expired reports reason Expired, whatever the code: a continue token the
// server no longer has (IsGone also accepts a version that is gone).
func expired(err error) bool {
	se, ok := asStatus(err)
	return ok && se.Reason == "Expired"
}
