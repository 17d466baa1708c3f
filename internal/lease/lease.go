// Package lease holds one coordination.k8s.io/v1 Lease for one identity:
// it takes and renews it by optimistic concurrency on resourceVersion and
// judges another holder's expiry on the local clock, from when it last
// saw the record change, never from the times another machine wrote.
// Packages leader (one lease all candidates compete for) and shard (one
// lease per member) are built on it.
package lease

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/raw"
)

// microTime is how the API server writes and wants MicroTime fields.
const microTime = "2006-01-02T15:04:05.000000Z07:00"

// Record is the spec of a coordination.k8s.io/v1 Lease as this package
// reads and writes it.
type Record struct {
	HolderIdentity       string
	LeaseDurationSeconds int
	AcquireTime          time.Time
	RenewTime            time.Time
	LeaseTransitions     int
}

type leaseSpec struct {
	HolderIdentity       *string `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int    `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *string `json:"acquireTime,omitempty"`
	RenewTime            *string `json:"renewTime,omitempty"`
	LeaseTransitions     *int    `json:"leaseTransitions,omitempty"`
}

func (r Record) spec() leaseSpec {
	var s leaseSpec
	if r.HolderIdentity != "" {
		s.HolderIdentity = &r.HolderIdentity
	}
	s.LeaseDurationSeconds = &r.LeaseDurationSeconds
	if !r.AcquireTime.IsZero() {
		t := r.AcquireTime.UTC().Format(microTime)
		s.AcquireTime = &t
	}
	if !r.RenewTime.IsZero() {
		t := r.RenewTime.UTC().Format(microTime)
		s.RenewTime = &t
	}
	s.LeaseTransitions = &r.LeaseTransitions
	return s
}

// RecordOf reads the spec of the Lease o.
func RecordOf(o *raw.Object) Record {
	r := Record{
		HolderIdentity:       o.Get("spec.holderIdentity").String(),
		LeaseDurationSeconds: int(o.Get("spec.leaseDurationSeconds").Int()),
		LeaseTransitions:     int(o.Get("spec.leaseTransitions").Int()),
	}
	// An unparsable time reads as zero: only holder, duration and the
	// resourceVersion decide anything here.
	r.AcquireTime, _ = time.Parse(time.RFC3339Nano, o.Get("spec.acquireTime").String())
	r.RenewTime, _ = time.Parse(time.RFC3339Nano, o.Get("spec.renewTime").String())
	return r
}

// Lease is one named Lease as one identity sees it. Fill the exported
// fields, then call its methods from one goroutine.
type Lease struct {
	Client   *httpwatch.ResourceClient
	Name     string
	Identity string
	Duration time.Duration
	Clock    clock.Clock
	// Labels are set on the lease when this identity creates it; a lease
	// of this name without them belongs to someone else (ErrForeign).
	Labels map[string]string
	// Annotations are written with every take and renewal, over the ones
	// the lease has.
	Annotations map[string]string

	// What this identity last read or wrote, and when (local clock) it
	// last saw the record change.
	observed     *raw.Object
	observedTime time.Time
}

// ErrForeign says the lease of this name lacks the Labels this identity
// creates it with: another user of the namespace named a lease alike (a
// group "g" with member "a-b" and a group "g-a" with member "b"), and
// taking it would fight over it.
var ErrForeign = cause.New("foreign lease", "lease belongs to another user")

// ErrHeld says another identity holds an unexpired lease.
var ErrHeld = cause.New("held lease", "lease is held by another identity")

// Try takes or renews the lease. It returns when the successful request was
// sent, by the local clock: the server's renewTime is no earlier than that,
// so other identities cannot take the lease before sent + Duration.
// A 409 (a lost race, or a create that met an existing lease) is returned
// as an error; the next try re-reads instead of overwriting. A lease found
// deleted is created only once the holder last seen in it has expired.
func (l *Lease) Try(ctx context.Context) (sent time.Time, err error) {
	sent = l.Clock.Now()
	cur, err := l.Client.Get(ctx, l.Name)
	if httpwatch.IsNotFound(err) {
		// A lease deleted under another holder says nothing of whether it
		// stopped: it expires as if it had not changed.
		if until, held := l.ExpiresIn(); held && until > 0 {
			return sent, fmt.Errorf("lease %s (deleted): %w (%s)", l.Name, ErrHeld, l.Holder())
		}
		rec := Record{HolderIdentity: l.Identity, LeaseDurationSeconds: l.seconds(), AcquireTime: sent, RenewTime: sent}
		o, err := l.Client.Create(ctx, l.Encode(nil, rec))
		if err != nil {
			return sent, requestError("create", l, err)
		}
		l.Observe(o)
		return sent, nil
	}
	if err != nil {
		return sent, requestError("get", l, err)
	}
	for k, v := range l.Labels {
		if got, _ := cur.Label(k); got != v {
			return sent, requestError("get", l, fmt.Errorf("%w: label %s is %q, not %q", ErrForeign, k, got, v))
		}
	}
	l.Observe(cur)
	old := RecordOf(cur)
	if until, held := l.ExpiresIn(); held && until > 0 {
		return sent, fmt.Errorf("lease %s: %w (%s)", l.Name, ErrHeld, old.HolderIdentity)
	}
	rec := old
	rec.LeaseDurationSeconds, rec.RenewTime = l.seconds(), sent
	if old.HolderIdentity != l.Identity {
		rec.HolderIdentity, rec.AcquireTime = l.Identity, sent
		rec.LeaseTransitions++
	}
	o, err := l.Client.Update(ctx, l.Encode(cur, rec))
	if err != nil {
		return sent, requestError("update", l, err)
	}
	l.Observe(o)
	return sent, nil
}

// Release gives the lease up if this identity still holds it. Call it
// only once this identity has stopped acting on the lease. A 409 makes it
// read the lease again and release that if it is still this identity's:
// a renewal whose reply was lost may have moved the resourceVersion on.
func (l *Lease) Release(ctx context.Context) error {
	if l.observed == nil || RecordOf(l.observed).HolderIdentity != l.Identity {
		return nil
	}
	err := l.clear(ctx, "release")
	if !httpwatch.IsConflict(err) {
		return err
	}
	cur, gerr := l.Client.Get(ctx, l.Name)
	if gerr != nil {
		return fmt.Errorf("release lease %s: read after a conflict: %w", l.Name, requestError("get", l, gerr))
	}
	l.Observe(cur)
	if RecordOf(cur).HolderIdentity != l.Identity {
		return nil
	}
	return l.clear(ctx, "release")
}

// Evict clears the holder of a lease another identity let expire, by an
// update conditional on the resourceVersion observed: a renewal that got
// through since makes it fail with a 409, and a renewal still in flight
// fails instead. It does nothing unless the observed lease has expired.
func (l *Lease) Evict(ctx context.Context) error {
	if until, held := l.ExpiresIn(); !held || until > 0 {
		return nil
	}
	return l.clear(ctx, "evict")
}

// clear empties the holder and sets the duration to one second, so that
// waiting identities act at their next try instead of after Duration.
func (l *Lease) clear(ctx context.Context, op string) error {
	rec := RecordOf(l.observed)
	rec.HolderIdentity, rec.LeaseDurationSeconds, rec.RenewTime = "", 1, l.Clock.Now()
	o, err := l.Client.Update(ctx, l.Encode(l.observed, rec))
	if err != nil {
		return fmt.Errorf("%s lease %s: %w", op, l.Name, requestError("update", l, err))
	}
	l.Observe(o)
	return nil
}

// Observe remembers o, read now; the expiry clock restarts only when the
// record or its resourceVersion changed.
func (l *Lease) Observe(o *raw.Object) {
	if l.observed == nil || l.observed.ResourceVersion() != o.ResourceVersion() ||
		RecordOf(l.observed) != RecordOf(o) {
		l.observedTime = l.Clock.Now()
	}
	l.observed = o
}

// Observed is the lease as last read or written, nil before that.
func (l *Lease) Observed() *raw.Object { return l.observed }

// ExpiresIn is how long until another holder's lease expires by this
// identity's observation; false if no other identity holds it.
func (l *Lease) ExpiresIn() (time.Duration, bool) {
	h := l.Holder()
	if h == "" || h == l.Identity {
		return 0, false
	}
	d := time.Duration(RecordOf(l.observed).LeaseDurationSeconds) * time.Second
	return l.observedTime.Add(d).Sub(l.Clock.Now()), true
}

// Holder is the identity in the last record seen, "" if none.
func (l *Lease) Holder() string {
	if l.observed == nil {
		return ""
	}
	return RecordOf(l.observed).HolderIdentity
}

func (l *Lease) seconds() int { return int((l.Duration + time.Second - 1) / time.Second) }

// Encode renders the lease to write: cur's object (metadata, including its
// resourceVersion for the optimistic-concurrency check, and any fields
// this package does not know) with rec as its spec, Annotations over its
// annotations, and, when cur is nil, Labels as its labels.
func (l *Lease) Encode(cur *raw.Object, rec Record) []byte {
	obj := map[string]any{}
	if cur != nil {
		_ = json.Unmarshal(cur.Raw(), &obj)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{"name": l.Name}
		if len(l.Labels) > 0 {
			meta["labels"] = l.Labels
		}
		obj["metadata"] = meta
	}
	if len(l.Annotations) > 0 {
		ann := map[string]any{}
		if old, ok := meta["annotations"].(map[string]any); ok {
			maps.Copy(ann, old)
		}
		for k, v := range l.Annotations {
			ann[k] = v
		}
		meta["annotations"] = ann
	}
	obj["apiVersion"], obj["kind"] = "coordination.k8s.io/v1", "Lease"
	obj["spec"] = rec.spec()
	b, _ := json.Marshal(obj)
	return b
}
