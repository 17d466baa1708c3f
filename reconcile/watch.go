package reconcile

import (
	"strings"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/store"
)

// Watch maps the changes of another informer's objects to keys of the
// runner's informer: each key Keys returns for an object added, changed
// (old and new) or deleted is reconciled, whether or not its own object
// changed.
type Watch struct {
	Informer *listwatch.Informer
	Keys     func(*listwatch.Object) []string
}

// ControllerOf maps an object to the key of its controller: the owner
// reference with controller=true, if its kind is kind and its apiVersion's
// group is group ("" for the core group, any version). The owner is in the
// object's namespace, as owner references require.
func ControllerOf(group, kind string) func(*listwatch.Object) []string {
	return func(obj *listwatch.Object) []string {
		for _, ref := range obj.Get("metadata.ownerReferences").Array() {
			if !ref.Get("controller").Bool() || ref.Get("kind").String() != kind {
				continue
			}
			g, _, ok := strings.Cut(ref.Get("apiVersion").String(), "/")
			if !ok {
				g = "" // "v1": the core group
			}
			if g == group {
				return []string{store.JoinKey(obj.Namespace(), ref.Get("name").String())}
			}
		}
		return nil
	}
}

// addHandlers registers the runner's handlers; r.mu is held.
func (r *Runner) addHandlers() error {
	reg, err := r.For.AddEventHandler(listwatch.HandlerFuncs{
		AddFunc: func(o *listwatch.Object, _ bool) { r.add(listwatch.Key(o), false) },
		UpdateFunc: func(old, o *listwatch.Object) {
			// A resync carries no change but asks for a reconcile.
			r.add(listwatch.Key(o), old.ResourceVersion() == o.ResourceVersion())
		},
		DeleteFunc: func(o *listwatch.Object, _ bool) { r.add(listwatch.Key(o), false) },
	})
	if err != nil {
		return err
	}
	r.handlers = append(r.handlers, reg.Remove)
	for _, w := range r.Watches {
		keys := func(objs ...*listwatch.Object) {
			for _, o := range objs {
				for _, k := range w.Keys(o) {
					r.add(k, true)
				}
			}
		}
		reg, err := w.Informer.AddEventHandler(listwatch.HandlerFuncs{
			AddFunc:    func(o *listwatch.Object, _ bool) { keys(o) },
			UpdateFunc: func(old, o *listwatch.Object) { keys(old, o) },
			DeleteFunc: func(o *listwatch.Object, _ bool) { keys(o) },
		})
		if err != nil {
			return err
		}
		r.handlers = append(r.handlers, reg.Remove)
	}
	return nil
}

func (r *Runner) removeHandlers() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, remove := range r.handlers {
		remove()
	}
	r.handlers = nil
}

// Len returns how many keys wait in the queue: its depth.
func (r *Runner) Len() int {
	r.mu.Lock()
	q := r.queue
	r.mu.Unlock()
	if q == nil {
		return 0
	}
	return q.Len()
}
