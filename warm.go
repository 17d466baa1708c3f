package listwatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/internal/faillog"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/snapshot"
)

// snapshotKey says what a snapshot of the informer's objects must match.
func snapshotKey(source httpwatch.ListerWatcher, inf *Informer, o snapshot.Options) (snapshot.Key, error) {
	key := snapshot.Key{LabelSelector: inf.sel.Label, FieldSelector: inf.sel.Field}
	rc, ok := source.(*httpwatch.ResourceClient)
	if !ok {
		if o.Identity == "" {
			return key, errors.New("the source is not a *httpwatch.ResourceClient: set Snapshot.Identity to say what its objects are")
		}
		key.Resource = inf.Reflector.Name
		key.Shape = fmt.Sprintf("identity=%q", o.Identity)
		return key, nil
	}
	if rc.Transform != nil && o.TransformVersion == "" {
		return key, errors.New("the source has a Transform: set Snapshot.TransformVersion to name it")
	}
	var paths []string
	if rc.Projection != nil {
		paths = rc.Projection.Paths()
	}
	key.Server = rc.Server()
	key.Resource = rc.Resource().String()
	key.Namespace = rc.Resource().Namespace
	key.Shape = fmt.Sprintf("metadataOnly=%t managedFields=%t projection=%q transform=%q identity=%q",
		rc.MetadataOnly, rc.KeepManagedFields, paths, o.TransformVersion, o.Identity)
	return key, nil
}

// warmKey takes the Snapshot options as Run starts and the key a snapshot
// must match; ok is false when none is kept. inf.mu is held.
func (inf *Informer) warmKey() (o snapshot.Options, key snapshot.Key, ok bool) {
	o = inf.Snapshot.WithDefaults()
	if o.Dir == "" {
		return o, key, false
	}
	key, err := snapshotKey(inf.reflector.Source, inf, o)
	if err != nil {
		inf.logger().Info("informer: no snapshots kept", "resource", inf.Reflector.Name, "reason", err.Error())
		return o, key, false
	}
	return o, key, true
}

// snapshotPath is where the snapshot of an informer of id is kept: o's
// Name, or a name of the resource and namespace, and, for an identity
// narrowed by selectors or a projection, a hash of them, so that
// informers of one resource that cache different objects never share a
// file (decision 41).
func snapshotPath(o snapshot.Options, key snapshot.Key, id Identity) string {
	path := o.Path(key)
	if o.Name != "" {
		return path
	}
	return strings.TrimSuffix(path, ".snap") + id.fileSuffix() + ".snap"
}

// startWarm prepares the snapshot directory and, if a snapshot that matches
// is there, makes the reflector resume from its version; the objects are
// read by loadSnapshot, which Run starts. It touches the file system, so
// Run calls it without inf.mu: a file that is slow to open (a network
// file system, a pipe) must not hold up the informer's other methods.
func (inf *Informer) startWarm(o snapshot.Options, key snapshot.Key) {
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		inf.logger().Warn("informer: no snapshots kept", "resource", inf.Reflector.Name, "err", err)
		return
	}
	inf.warm.opts, inf.warm.key, inf.warm.path = o, key, snapshotPath(o, key, inf.id)
	snapshot.RemoveTemporary(inf.warm.path)
	if err := writable(o.Dir); err != nil {
		// Said now, not at the first save: the process may die before.
		// The saves that fail the same way are then counted at Debug.
		inf.saveFailed("informer: snapshot directory not writable; snapshots will not be saved, a restart will list", o.Dir, err)
	}
	rd := inf.openSnapshot()
	if rd == nil {
		return
	}
	w := &inf.warm
	w.reader = rd
	w.loading = make(chan struct{})
	// The reflector watches from the snapshot's version while loadSnapshot
	// reads its objects, and has the watch confirm it (decision 32).
	inf.reflector.ResourceVersion = rd.ResourceVersion
	inf.reflector.Restore = &reflector.Restore{
		Done:         w.loading,
		Loaded:       func() bool { return w.loadedOK },
		ConfirmAfter: w.opts.ConfirmAfter,
		Confirmed:    w.markConfirmed,
	}
}

// openSnapshot opens the informer's snapshot and checks its header: key,
// format and age. A snapshot that cannot be used is logged and removed;
// nil then.
func (inf *Informer) openSnapshot() *snapshot.Reader {
	w := &inf.warm
	rd, err := snapshot.Open(w.path, w.key, w.opts.Limits)
	if err == nil {
		if age := inf.clock().Since(rd.Written); age > w.opts.MaxAge {
			rd.Close()
			err = fmt.Errorf("%w: written %v ago, MaxAge %v", errTooOld, age.Round(time.Second), w.opts.MaxAge)
		}
	}
	if err == nil {
		return rd
	}
	inf.dropSnapshot(err)
	return nil
}

// loadSnapshot reads the objects of the snapshot startWarm opened, while
// the reflector opens the watch from its version, and puts them in the
// cache, handing each to the handlers as an initial add. The reflector
// hands the queue nothing until this is done (reflector.Restore).
func (inf *Informer) loadSnapshot() {
	w := &inf.warm
	defer close(w.loading)
	snap, err := w.reader.Read()
	w.reader.Close()
	if err == nil {
		inf.mu.Lock()
		err = inf.restore(snap)
		inf.mu.Unlock()
	}
	if err != nil {
		inf.dropSnapshot(err)
		return
	}
	// Said at Info, as is its confirmation (runWarm): a warm start is
	// worth seeing work, once per start (decision 32).
	inf.logger().Info("informer: restored snapshot; awaiting the server's confirmation", "resource", inf.Reflector.Name,
		"objects", len(snap.Objects), "resourceVersion", snap.ResourceVersion, "path", w.path)
	w.saves.restored.Store(int64(len(snap.Objects)))
	w.saves.restoredRV.Store(&snap.ResourceVersion)
	w.savedRV = snap.ResourceVersion
	w.loadedOK = true
	w.restored.Store(true)
	w.markLoaded()
	inf.mirrorRestored(snap)
}

// mirrorRestored hands a restored snapshot to the Mirror as a list at its
// version, before the reflector hands it anything (it waits for the load):
// a cache served onwards serves it at once, warm (decisions 32, 43).
func (inf *Informer) mirrorRestored(snap *snapshot.Snapshot) {
	if inf.Mirror == nil {
		return
	}
	if err := inf.Mirror.Replace(snap.Objects, snap.ResourceVersion); err != nil {
		inf.logger().Error("informer: the Mirror refused the restored snapshot", "resource", inf.Reflector.Name, "err", err)
		if inf.onError != nil {
			inf.onError(err)
		}
	}
}

// dropSnapshot logs why the snapshot is not used and removes it.
func (inf *Informer) dropSnapshot(err error) {
	w := &inf.warm
	log := inf.logger().With("resource", inf.Reflector.Name, "path", w.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		log.Debug("informer: no snapshot to restore")
		return
	case errors.Is(err, snapshot.ErrMismatch), errors.Is(err, snapshot.ErrVersion), errors.Is(err, errTooOld):
		log.Info("informer: snapshot not used, listing instead", "reason", err.Error())
	default:
		log.Warn("informer: snapshot unreadable, removed; listing instead", "err", err)
	}
	if err := os.Remove(w.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		log.Warn("informer: remove unusable snapshot", "err", err)
	}
}

var errTooOld = errors.New("snapshot too old")

// restore fills the empty cache with snap's objects, if each has a key of
// its own, and tells the handlers; inf.mu is held.
func (inf *Informer) restore(snap *snapshot.Snapshot) error {
	var err error
	for i, o := range snap.Objects {
		if err = inf.indexer.Add(o); err != nil {
			// A key or index function refused it.
			snap.Objects = snap.Objects[:i]
			break
		}
	}
	if err == nil && inf.indexer.Len() != len(snap.Objects) {
		err = errors.New("two objects of one key")
	}
	if err != nil {
		for _, added := range snap.Objects { // leave the cache empty, as it was
			_ = inf.indexer.Delete(added)
		}
		return fmt.Errorf("%w: %w", snapshot.ErrCorrupt, err)
	}
	for _, o := range snap.Objects {
		inf.processor.Distribute(processor.Added(o, true))
	}
	return nil
}

// runWarm closes the synced and loaded signals as the informer syncs, and
// saves the cache then and every Interval until ctx ends.
func (inf *Informer) runWarm(ctx context.Context) {
	select {
	case <-inf.fifo.Done():
	case <-inf.warm.confirmed:
	case <-ctx.Done():
		if inf.HasSynced() { // both ready: Synced must not stay open
			inf.warm.markSynced()
			inf.warm.markLoaded()
		}
		return
	}
	if inf.warm.restored.Swap(false) {
		inf.sayWarmStartOutcome()
	}
	inf.warm.markSynced()
	inf.warm.markLoaded()
	if inf.warm.path == "" {
		return
	}
	// The first save comes right after the first sync, so that a process
	// killed within its first Interval still restarts warm.
	t := inf.clock().NewTimer(inf.saveNext())
	defer t.Stop()
	for {
		select {
		case <-t.C():
		case <-ctx.Done():
			return
		}
		t.Reset(inf.saveNext())
	}
}

// sayWarmStartOutcome says at Info how a warm start ended: confirmed by
// the server with nothing listed, or listed after all (a 410: the server
// forgot the snapshot's version).
func (inf *Informer) sayWarmStartOutcome() {
	st := inf.Stats()
	log := inf.logger().With("resource", inf.Reflector.Name, "objects", st.Snapshot.Restored,
		"resourceVersion", st.Snapshot.RestoredVersion)
	if inf.warm.isConfirmed() && st.Lists == 0 {
		log.Info("informer: warm start confirmed by the server; listed nothing")
		return
	}
	log.Info("informer: restored snapshot out of date; listed instead", "lists", st.Lists)
}

// saveNext saves the cache and returns when to try again: after
// Interval, or soon when the queue was busy.
func (inf *Informer) saveNext() time.Duration {
	if !inf.saveSnapshot() {
		return retryBusy
	}
	return inf.warm.opts.Interval
}

// writable checks that a file can be made in dir.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".listwatch-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// retryBusy is how soon a save put off by a busy queue is tried again.
const retryBusy = time.Second

// saveSnapshot writes the cache if its version moved since the last
// write. It reports false when the queue held changes not yet applied, so
// that no consistent version could be had.
func (inf *Informer) saveSnapshot() bool {
	w := &inf.warm
	// Read first: the reflector queues every change up to this version
	// before publishing it, so an idle queue below means all are applied.
	rv := inf.reflector.LastSyncResourceVersion()
	if rv == "" || rv == w.savedRV || !inf.HasSynced() {
		return true
	}
	inf.mu.Lock()
	objs, ok := inf.captureLocked()
	inf.mu.Unlock()
	if !ok {
		return false
	}
	snap := &snapshot.Snapshot{Key: w.key, ResourceVersion: rv, Objects: objs, Written: inf.clock().Now()}
	start := inf.clock().Now()
	if err := snapshot.WriteFile(w.path, snap); err != nil {
		w.saves.failures.Add(1)
		inf.saveFailed("informer: snapshot not saved; a restart will list", w.path, err)
		return true
	}
	w.failures.Recovered("informer: snapshot saved again", "resource", inf.Reflector.Name, "path", w.path)
	w.savedRV = rv
	w.saves.note(w.path, start, inf.clock().Since(start))
	return true
}

// saveFailed says, by the failure policy and the cause of err, that
// snapshots cannot be written at path: the first time at Warn, or at
// Error with what to do when retrying cannot cure it (a directory this
// process may not write), then counted.
func (inf *Informer) saveFailed(msg, path string, err error) {
	w := &inf.warm
	if w.failures.Logger == nil {
		w.failures.Logger, w.failures.Clock = inf.logger(), inf.clock()
	}
	c := cause.Of(err)
	f := faillog.Failure{
		Key: c.LogKey(), Level: slog.LevelWarn, Msg: msg, Again: "informer: snapshot not saved",
		Attrs: []any{"resource", inf.Reflector.Name, "path", path, "err", err}, Err: err,
	}
	if c.Class == cause.Permanent {
		f.Level = slog.LevelError
	}
	if hint := c.HintFor(cause.Request{Resource: path}); hint != "" {
		f.Attrs = append(f.Attrs, "hint", hint)
	}
	w.failures.Failed(f)
}

// captureLocked copies the cache if it holds every change queued so far,
// and so every change up to a version read before; inf.mu is held, so no
// change can be applied until the caller lets go.
func (inf *Informer) captureLocked() ([]*Object, bool) {
	if !inf.fifo.Idle() {
		return nil, false
	}
	return inf.indexer.List(), true // the objects are immutable: the list is the copy
}

// restored reports whether the cache holds objects restored from a
// snapshot that the server has not confirmed yet: readable, possibly
// behind the server.
func (inf *Informer) restored() bool { return inf.warm.restored.Load() && !inf.HasSynced() }
