package httpwatch

import "context"

// ListOptions are the query parameters of a list or watch request.
type ListOptions struct {
	LabelSelector        string
	FieldSelector        string
	Limit                int64
	Continue             string
	ResourceVersion      string
	ResourceVersionMatch string
	TimeoutSeconds       int64
	AllowWatchBookmarks  bool
	SendInitialEvents    bool
}

// Page is one page of a list response.
type Page struct {
	Items              []*Object
	ResourceVersion    string
	Continue           string
	RemainingItemCount *int64
}

// Watcher is an open watch stream. Next blocks until the next event; it
// returns io.EOF when the stream ended cleanly. Stop is idempotent and
// unblocks a pending Next.
type Watcher interface {
	Next() (Event, error)
	Stop()
}

// PageLister reads one page of a list.
type PageLister interface {
	ListPage(ctx context.Context, opts ListOptions) (*Page, error)
}

// ListerWatcher is the reflector's only view of a source: one page of a list,
// or a watch stream. *ResourceClient satisfies it for one resource.
type ListerWatcher interface {
	PageLister
	Watch(ctx context.Context, opts ListOptions) (Watcher, error)
}
