package listwatch

import (
	"errors"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/reflector"
)

// tee hands the reflector's calls to an informer's Mirror, then to its
// queue (decision 43).
type tee struct {
	mirror reflector.Sink
	fifo   *delta.FIFO[*Object]
}

func (t tee) Add(obj *Object) error    { return errors.Join(t.mirror.Add(obj), t.fifo.Add(obj)) }
func (t tee) Update(obj *Object) error { return errors.Join(t.mirror.Update(obj), t.fifo.Update(obj)) }
func (t tee) Delete(obj *Object) error { return errors.Join(t.mirror.Delete(obj), t.fifo.Delete(obj)) }
func (t tee) Resync() error            { return errors.Join(t.mirror.Resync(), t.fifo.Resync()) }

func (t tee) Replace(items []*Object, rv string) error {
	return errors.Join(t.mirror.Replace(items, rv), t.fifo.Replace(items, rv))
}

// Flush wakes the queue's consumer once per batch (reflector.Flusher).
func (t tee) Flush() { t.fifo.Flush() }

// Progress passes a bookmark's version to a mirror that wants it.
func (t tee) Progress(rv string) {
	if p, ok := t.mirror.(reflector.Progresser); ok {
		p.Progress(rv)
	}
}
