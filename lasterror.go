package listwatch

import (
	"errors"
	"sync"

	"github.com/listwatch/listwatch/reflector"
)

// lastError keeps the last sync error that was not routine, and wakes the
// waits when it changes.
type lastError struct {
	mu      sync.Mutex
	err     error
	changed chan struct{} // closed, and replaced, by each set
}

// note records err if it is a failure worth returning from a wait.
func (l *lastError) note(err error) {
	var se *reflector.SyncError
	if !errors.As(err, &se) || se.Routine {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = se
	if l.changed != nil {
		close(l.changed)
	}
	l.changed = make(chan struct{})
}

func (l *lastError) get() (<-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed, l.err
}
