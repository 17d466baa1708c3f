package listwatch

// sink is what the informer's reflector writes to: the queue, drained at
// once on the reflector's goroutine into the cache and the handlers'
// buffers. Applying each change where it was decoded keeps the object in
// that core's cache and spares a hand-off to a goroutine of its own; the
// queue still merges what a relist finds and keeps HasSynced's count. The
// handlers are told with Post, and woken only at Flush, which the
// reflector calls before it may wait for the server (reflector.Flusher):
// a handler waiting for work is woken once per read of the stream rather
// than once per event, and nothing is held while the stream is quiet.
type sink struct{ inf *Informer }

func (s sink) Add(obj *Object) error    { return s.drain(s.inf.fifo.Add(obj)) }
func (s sink) Update(obj *Object) error { return s.drain(s.inf.fifo.Update(obj)) }
func (s sink) Delete(obj *Object) error { return s.drain(s.inf.fifo.Delete(obj)) }
func (s sink) Resync() error            { return s.drain(s.inf.fifo.Resync()) }

func (s sink) Replace(list []*Object, resourceVersion string) error {
	return s.drain(s.inf.fifo.Replace(list, resourceVersion))
}

// Flush wakes the handlers that wait while their buffers hold changes.
func (s sink) Flush() { s.inf.processor.Flush() }

// flushEvery is how many keys a long drain (a list's Replace) applies
// between Flushes, so that handlers work through the list beside the
// cache rather than after it.
const flushEvery = 256

// drain applies every queued key, then returns err, the queue's answer to
// the write that queued them. Only the reflector writes and drains, one
// call at a time, so the queue's Pop never waits.
func (s sink) drain(err error) error {
	inf := s.inf
	for n := 1; inf.fifo.Len() > 0; n++ {
		if n%flushEvery == 0 {
			s.Flush()
		}
		_, applyErr := inf.fifo.Pop(inf.apply)
		inf.projection.afterPop(inf)
		if applyErr != nil {
			// The cache refused a change (a key or index function failed):
			// an error worth seeing, like the reflector's (decision 6).
			inf.logger().Error("informer: apply deltas", "resource", inf.Reflector.Name, "err", applyErr)
			if inf.onError != nil {
				inf.onError(applyErr)
			}
		}
	}
	return err
}
