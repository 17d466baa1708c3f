package listwatch

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/internal/faillog"
	"github.com/listwatch/listwatch/snapshot"
)

// warm is an informer's warm start (decision 32): the snapshot it
// restored, the signals around it, and the snapshots it keeps.
type warm struct {
	opts snapshot.Options // with defaults; Dir "" when off
	key  snapshot.Key
	path string

	restored  atomic.Bool   // the cache holds a snapshot the server has not confirmed
	loaded    chan struct{} // closed once the cache holds a snapshot or a sync
	confirmed chan struct{} // closed when a resumed watch confirms the snapshot
	synced    chan struct{} // closed once HasSynced
	once      struct{ loaded, confirmed, synced sync.Once }

	reader   *snapshot.Reader // the snapshot Run loads; nil if none
	loading  chan struct{}    // closed when loadSnapshot ends
	loadedOK bool             // the snapshot is in the cache; read after loading closed

	savedRV string // the version last written or restored; Run's goroutines only, in turn
	// failures says failed saves by the failure policy (decision 20);
	// Run's goroutines only, in turn.
	failures faillog.Tracker
	saves    saves // for Stats
}

func newWarm() warm {
	return warm{loaded: make(chan struct{}), confirmed: make(chan struct{}), synced: make(chan struct{})}
}

func (w *warm) markLoaded()    { w.once.loaded.Do(func() { close(w.loaded) }) }
func (w *warm) markConfirmed() { w.once.confirmed.Do(func() { close(w.confirmed) }) }
func (w *warm) markSynced()    { w.once.synced.Do(func() { close(w.synced) }) }

func (w *warm) isConfirmed() bool {
	select {
	case <-w.confirmed:
		return true
	default:
		return false
	}
}

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
