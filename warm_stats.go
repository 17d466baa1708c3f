package listwatch

import (
	"os"
	"sync/atomic"
	"time"
)

// SnapshotStats describes the snapshots an informer saved since Run
// started (decision 32): enough to export a warm start's health as
// metrics.
type SnapshotStats struct {
	Saved    time.Time     // when the last one was written; zero if none
	Bytes    int64         // the size of its file
	Took     time.Duration // how long writing it took, fsyncs included
	Failures int64         // saves that failed (each is logged)
	// Restored is how many objects Run restored from a snapshot as it
	// started (0: none, it listed), and RestoredVersion the
	// resourceVersion it resumed from. They stay set for the life of
	// the informer, so that a warm start can be seen after the fact.
	Restored        int
	RestoredVersion string
}

// saves is what Stats says of the snapshots saved; written by Run's
// goroutines, read by Stats at any time.
type saves struct {
	at, bytes, took, failures atomic.Int64 // at in UnixNano
	restored                  atomic.Int64
	restoredRV                atomic.Pointer[string]
}

// note records a save of path, begun at start, that took took.
func (s *saves) note(path string, start time.Time, took time.Duration) {
	if fi, err := os.Stat(path); err == nil {
		s.bytes.Store(fi.Size())
	}
	s.took.Store(int64(took))
	s.at.Store(start.Add(took).UnixNano())
}

func (s *saves) stats() SnapshotStats {
	st := SnapshotStats{Bytes: s.bytes.Load(), Took: time.Duration(s.took.Load()), Failures: s.failures.Load(),
		Restored: int(s.restored.Load())}
	if rv := s.restoredRV.Load(); rv != nil {
		st.RestoredVersion = *rv
	}
	if at := s.at.Load(); at != 0 {
		st.Saved = time.Unix(0, at)
	}
	return st
}
