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
}

// saves is what Stats says of the snapshots saved; written by Run's
// goroutines, read by Stats at any time.
type saves struct {
	at, bytes, took, failures atomic.Int64 // at in UnixNano
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
	st := SnapshotStats{Bytes: s.bytes.Load(), Took: time.Duration(s.took.Load()), Failures: s.failures.Load()}
	if at := s.at.Load(); at != 0 {
		st.Saved = time.Unix(0, at)
	}
	return st
}
