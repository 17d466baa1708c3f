package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/listwatch/listwatch"
)

// FirstSync is an informer whose errors are fatal until its first sync.
type FirstSync struct {
	inf   *listwatch.Informer
	fatal chan error
}

// FailFast makes the errors inf meets before its first sync fatal: a wrong
// URL, token or resource name will not fix itself, so retrying would only
// hide it. Afterwards the informer retries them and they are written to
// warnings as "warning: ...". It sets inf.OnError, so call it before inf
// runs.
func FailFast(inf *listwatch.Informer, warnings io.Writer) *FirstSync {
	s := &FirstSync{inf: inf, fatal: make(chan error, 1)}
	inf.OnError = func(err error) {
		if !inf.HasSynced() {
			select {
			case s.fatal <- err:
			default:
			}
			return
		}
		fmt.Fprintln(warnings, "warning:", err)
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
	for {
		select {
		case <-s.inf.Synced():
			if tty {
				fmt.Fprint(progress, "\r\033[K")
			}
			return nil
		case err := <-s.fatal:
			if tty {
				fmt.Fprint(progress, "\r\033[K")
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("interrupted before the first sync: %w", ctx.Err())
		case <-tick:
			st := s.inf.Stats()
			fmt.Fprintf(progress, "\rsyncing: %d pages, %d objects, %s", st.ListPages, st.ListedItems+st.Events,
				time.Since(start).Round(100*time.Millisecond))
		}
	}
}
