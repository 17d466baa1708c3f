package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/reflector"
)

// FirstSync is an informer whose errors are fatal until its first sync.
type FirstSync struct {
	inf   *listwatch.Informer
	fatal chan error
}

// FailFast makes the errors inf meets before its first sync fatal, save the
// routine ones (a watch-list the server refuses, a version expired): in a
// command-line tool a wrong URL, token or resource name is better reported
// at once than retried, even one that may fix itself. Afterwards the
// informer retries every error and its Logger reports each failure once,
// then a count. It sets inf.OnError, so call it before inf runs.
func FailFast(inf *listwatch.Informer) *FirstSync {
	s := &FirstSync{inf: inf, fatal: make(chan error, 1)}
	inf.OnError = func(err error) {
		var se *reflector.SyncError
		if inf.HasSynced() || errors.As(err, &se) && se.Routine {
			return
		}
		select {
		case s.fatal <- err:
		default:
		}
	}
	return s
}

// Wait returns nil once the informer has synced, or the first error before
// that, or an error wrapping ctx's when ctx ends first. When progress is a
// terminal it shows there how far the first list has got, on one line it
// clears when done.
func (s *FirstSync) Wait(ctx context.Context, progress io.Writer) error {
	var tick <-chan time.Time
	tty := IsTerminal(progress)
	if tty {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	start := time.Now()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	synced := make(chan error, 1)
	go func() { synced <- s.inf.Wait(wctx) }()
	for {
		select {
		case err := <-synced:
			if tty {
				fmt.Fprint(progress, "\r\033[K")
			}
			if err != nil && ctx.Err() != nil {
				// The informer's wait says why: ctx's error and the last sync error.
				return fmt.Errorf("interrupted before the first sync: %w", err)
			}
			return err
		case err := <-s.fatal:
			if tty {
				fmt.Fprint(progress, "\r\033[K")
			}
			return err
		case <-tick:
			st := s.inf.Stats()
			fmt.Fprintf(progress, "\rsyncing: %d pages, %d objects, %s", st.ListPages, st.ListedItems+st.Events,
				time.Since(start).Round(100*time.Millisecond))
		}
	}
}
