package listwatch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/processor"
)

// takeName fixes the informer's identity and name as Run starts: the
// name defaults to the identity, and is made distinct while another
// running informer of the same client has it (decision 41); inf.mu is
// held. It returns the func that gives the name back.
func (inf *Informer) takeName() (release func()) {
	inf.id = identityOf(inf)
	if inf.Reflector.Name == inf.defaultName {
		inf.Reflector.Name = inf.id.String()
	}
	name, release := claimName(clientOf(inf.reflector.Source), inf.Reflector.Name)
	if name != inf.Reflector.Name {
		inf.logger().Warn("informer: another running informer has this name; this one is told apart by a number",
			"resource", name, "hint", "share one informer of an identity through a Factory, or set Reflector.Name")
		inf.Reflector.Name = name
	}
	return release
}

// configure hands the exported fields to the parts, once, as Run starts;
// inf.mu is held.
func (inf *Informer) configure() {
	r := inf.reflector
	r.Options = inf.Reflector
	r.LabelSelector, r.FieldSelector = inf.sel.Label, inf.sel.Field
	if inf.Mirror != nil {
		r.Sink = tee{mirror: inf.Mirror, fifo: inf.fifo}
	}
	r.ResyncPeriod = inf.checkPeriod
	r.ShouldResync = inf.processor.ShouldResync
	onError := inf.OnError
	r.OnError = func(err error) {
		inf.syncErr.note(err)
		if onError != nil {
			onError(err)
		}
	}
	r.Clock = inf.clock()
	r.Logger = inf.logger()
	p := inf.processor
	p.Options = inf.Processor
	p.Clock = inf.clock()
	p.Logger = inf.logger()
	inf.onError = inf.OnError
	inf.projection.start(r.Source)
}

// Run syncs the cache and delivers notifications until ctx is done, then
// stops every goroutine it started and returns. It takes the exported
// fields as they are when it starts; later changes have no effect. A
// second call logs and returns at once.
func (inf *Informer) Run(ctx context.Context) {
	inf.mu.Lock()
	if inf.started || inf.stopped {
		inf.mu.Unlock()
		inf.logger().Warn("informer already started", "resource", inf.Reflector.Name)
		return
	}
	inf.started = true
	close(inf.running)
	defer close(inf.done)
	release := inf.takeName()
	defer release()
	inf.configure()
	warm, key, keep := inf.warmKey()
	inf.mu.Unlock()
	if keep {
		inf.startWarm(warm, key)
	}

	// Handlers outlive the reflector by a little: the processor stops only
	// after the last delta was popped, so nothing popped goes unannounced.
	procCtx, stopProc := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { inf.processor.Run(procCtx) })
	wg.Go(func() { inf.reflector.Run(ctx) })
	wg.Go(func() { inf.runWarm(ctx) })
	if inf.warm.reader != nil {
		wg.Go(inf.loadSnapshot)
	}
	stopFIFO := context.AfterFunc(ctx, inf.fifo.Close)
	defer stopFIFO()
	inf.popLoop()
	stopProc()
	wg.Wait()
	if inf.warm.path != "" {
		inf.saveSnapshot() // the last state, for the next start
	}
	inf.mu.Lock()
	inf.stopped = true
	inf.mu.Unlock()
}

// flushEvery is how many keys the pop loop applies between wake-ups of the
// handlers while the queue stays full (a list), so that handlers work
// through a list beside the cache rather than after it.
const flushEvery = 256

// popLoop applies the queue to the cache until it is closed and drained.
// Notifications are posted to the handlers' buffers (processor.Post) and a
// handler waiting for work is woken when the queue runs dry, or every
// flushEvery keys: once per batch the reflector flushed, not per change.
func (inf *Informer) popLoop() {
	for n := 1; ; n++ {
		_, err := inf.fifo.Pop(inf.apply)
		if errors.Is(err, delta.ErrClosed) {
			inf.processor.Flush()
			return
		}
		if n%flushEvery == 0 || inf.fifo.Len() == 0 {
			inf.processor.Flush()
		}
		if inf.projection.due() && inf.HasSynced() {
			inf.projection.check(inf.indexer.List(), inf.logger(), inf.reflector.Name)
		}
		if err != nil {
			// The cache refused a change (a key or index function failed):
			// an error worth seeing, like the reflector's (decision 6).
			inf.logger().Error("informer: apply deltas", "resource", inf.Reflector.Name, "err", err)
			if inf.onError != nil {
				inf.onError(err)
			}
		}
	}
}

// apply writes one key's deltas to the cache and posts the notifications
// to the handlers (see popLoop).
func (inf *Informer) apply(ds delta.Deltas[*Object], isInInitialList bool) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	for _, d := range ds {
		if d.Type == delta.Deleted {
			if err := inf.applyDelete(d); err != nil {
				return err
			}
			continue
		}
		obj := d.Object
		old, exists, err := inf.indexer.Swap(obj)
		if err != nil {
			return fmt.Errorf("apply %s: %w", d.Type, err)
		}
		if exists {
			// A relist returning the version we hold changed nothing: deliver
			// it as a resync, to due handlers only (decision 8).
			resync := d.Type == delta.Sync ||
				(d.Type == delta.Replaced && old.ResourceVersion() == obj.ResourceVersion())
			inf.processor.Post(processor.Updated(old, obj, resync))
			continue
		}
		inf.processor.Post(processor.Added(obj, isInInitialList))
	}
	return nil
}

func (inf *Informer) applyDelete(d delta.Delta[*Object]) error {
	obj := d.Object
	if d.Tombstone != nil {
		// The object vanished while no one watched: remove what the cache
		// holds under its key and hand out the last state known.
		cached, exists, err := inf.indexer.GetByKey(d.Tombstone.Key)
		if err != nil {
			return fmt.Errorf("apply tombstone %q: %w", d.Tombstone.Key, err)
		}
		if exists {
			if err := inf.indexer.Delete(cached); err != nil {
				return fmt.Errorf("apply tombstone %q: %w", d.Tombstone.Key, err)
			}
			if obj == nil {
				obj = cached
			}
		}
		if obj != nil {
			inf.processor.Post(processor.Deleted(obj, true))
		}
		return nil
	}
	if err := inf.indexer.Delete(obj); err != nil {
		return fmt.Errorf("apply delete: %w", err)
	}
	inf.processor.Post(processor.Deleted(obj, false))
	return nil
}
