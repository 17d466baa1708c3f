package httpwatch

import (
	"context"
	"time"

	"github.com/listwatch/listwatch/raw"
)

// ListOptions are the query parameters of a list or watch request (see
// Values and ParseListOptions). Zero values are not sent.
type ListOptions struct {
	LabelSelector string
	FieldSelector string
	// Limit is the page size of a list. ListPage sends none when it is 0 or
	// less; ListAll pages by 500 for 0 and lists unpaginated below 0.
	Limit int64
	// Continue is the token from the previous page.
	Continue string
	// ResourceVersion and ResourceVersionMatch choose how fresh a list must
	// be ("" is a consistent read, "0" anything cached) or where a watch
	// starts.
	ResourceVersion      string
	ResourceVersionMatch string
	// TimeoutSeconds asks the server to end a watch (cleanly) after this
	// long. Client.WatchHeaderTimeout bounds the wait for the server's
	// answer, and IdleTimeout the silence of the stream after it.
	TimeoutSeconds      int64
	AllowWatchBookmarks bool
	// SendInitialEvents makes a watch start with an ADDED event for every
	// object, then a BOOKMARK annotated "k8s.io/initial-events-end" (a
	// streaming list; needs ResourceVersionMatch "NotOlderThan").
	SendInitialEvents bool
	// IdleTimeout is client-side and never sent: it bounds how long the
	// watch may wait for a byte from the server (no event, no bookmark)
	// before it ends with an error wrapping ErrWatchIdle, and the client
	// drops its idle connections, which may be as silent (decision 36).
	// With AllowWatchBookmarks it holds only while the server is taken to
	// send bookmarks to quiet watches in time: the Client hopes so of a
	// server it has not heard of yet, learns it from a bookmark that comes
	// within IdleTimeout of the watch's opening or of the previous one, and
	// gives the hope up when a hopeful watch heard none before its bound.
	// Until a bookmark comes in time again, and when IdleTimeout is zero,
	// the bound is TimeoutSeconds plus 30 s (the server should have ended
	// the watch by then), or an hour and 30 s without TimeoutSeconds.
	// Negative means no bound at all.
	IdleTimeout time.Duration
}

// Page is one page of a list response, or a whole list from ListAll
// (Continue then empty).
type Page struct {
	Items              []*raw.Object
	ResourceVersion    string
	Continue           string
	RemainingItemCount *int64
}

// Watcher is an open watch stream. Next blocks until the next event; it
// returns io.EOF when the stream ended cleanly, and otherwise an error after
// which the stream is closed (see ResourceClient.Watch for which). Stop is
// idempotent, safe from any goroutine, and unblocks a pending Next, which
// then returns io.EOF. Next itself must not be called concurrently.
//
// A Watcher also says when Next has to wait (NotifyRead): a reader that
// holds work back while events flow (an informer holds back waking its
// handlers, to wake each once per batch of events rather than once per
// event, decision 33) hands it on then, so nothing is held while the
// stream is quiet. A Watcher that wraps another passes NotifyRead on, or
// calls fn itself before it waits for anything else.
type Watcher interface {
	Next() (Event, error)
	Stop()
	// NotifyRead makes Next call fn, on Next's goroutine, whenever it has
	// handed out every event it holds and is about to wait for more; nil
	// stops the calls. Call it before Next, not concurrently with it.
	NotifyRead(fn func())
}

// ListerWatcher is the reflector's only view of a source: one page of a
// list, a watch stream, and what the source is (Info). *ResourceClient
// satisfies it for one resource; a source that wraps another passes its
// Info on.
type ListerWatcher interface {
	ListPage(ctx context.Context, opts ListOptions) (*Page, error)
	Watch(ctx context.Context, opts ListOptions) (Watcher, error)
	Info() SourceInfo
}

// SourceInfo is what a source says of itself to whoever reads it.
type SourceInfo struct {
	// Resource is the resource the source reads: it names the informer
	// and the path of its failures in logs. The zero Resource says none
	// (a source in memory); the reader then calls its objects "objects".
	Resource Resource
	// WatchList reports whether the source can serve a watch with
	// SendInitialEvents (a watch-list stream). A reader lists a source
	// that cannot page by page; one that can may still be refused by its
	// server, and falls back then.
	WatchList bool
}
