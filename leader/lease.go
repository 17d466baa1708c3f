package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
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

func recordOf(o *httpwatch.Object) Record {
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

// lease holds one named Lease for one identity: it reads the record,
// takes or renews it by optimistic concurrency, and judges another
// holder's expiry by the local clock from when it last saw the record
// change. The elector uses it for the leader lease; a membership lease is
// the same loop on a lease of the member's own name.
type lease struct {
	client   *httpwatch.ResourceClient
	name     string
	identity string
	duration time.Duration
	clock    clock.Clock

	// What this candidate last read or wrote, and when (local clock) it
	// last saw the record change.
	observed     *httpwatch.Object
	observedTime time.Time
}

// errHeld says another identity holds an unexpired lease.
var errHeld = errors.New("lease is held by another identity")

// try takes or renews the lease. It returns when the successful request was
// sent, by the local clock: the server's renewTime is no earlier than that,
// so other candidates cannot take the lease before sent + LeaseDuration.
// A 409 (a lost race, or a create that met an existing lease) is returned
// as an error; the next try re-reads instead of overwriting.
func (l *lease) try(ctx context.Context) (sent time.Time, err error) {
	sent = l.clock.Now()
	cur, err := l.client.Get(ctx, l.name)
	if httpwatch.IsNotFound(err) {
		rec := Record{HolderIdentity: l.identity, LeaseDurationSeconds: l.seconds(), AcquireTime: sent, RenewTime: sent}
		o, err := l.client.Create(ctx, l.encode(nil, rec))
		if err != nil {
			return sent, fmt.Errorf("create lease %s: %w", l.name, err)
		}
		l.observe(o, l.clock.Now())
		return sent, nil
	}
	if err != nil {
		return sent, fmt.Errorf("read lease %s: %w", l.name, err)
	}
	now := l.clock.Now()
	l.observe(cur, now)
	old := recordOf(cur)
	if until, held := l.expiresIn(); held && until > 0 {
		return sent, fmt.Errorf("lease %s: %w (%s)", l.name, errHeld, old.HolderIdentity)
	}
	rec := old
	rec.LeaseDurationSeconds, rec.RenewTime = l.seconds(), sent
	if old.HolderIdentity != l.identity {
		rec.HolderIdentity, rec.AcquireTime = l.identity, sent
		rec.LeaseTransitions++
	}
	o, err := l.client.Update(ctx, l.encode(cur, rec))
	if err != nil {
		return sent, fmt.Errorf("update lease %s: %w", l.name, err)
	}
	l.observe(o, l.clock.Now())
	return sent, nil
}

// release gives the lease up if this identity still holds it: the holder
// is cleared and the duration set to one second, so waiting candidates take
// it at their next try instead of waiting out LeaseDuration.
func (l *lease) release(ctx context.Context) error {
	if l.observed == nil || recordOf(l.observed).HolderIdentity != l.identity {
		return nil
	}
	now := l.clock.Now()
	rec := recordOf(l.observed)
	rec.HolderIdentity, rec.LeaseDurationSeconds, rec.RenewTime = "", 1, now
	o, err := l.client.Update(ctx, l.encode(l.observed, rec))
	if err != nil {
		return fmt.Errorf("release lease %s: %w", l.name, err)
	}
	l.observe(o, now)
	return nil
}

// observe remembers o; the expiry clock restarts only when the record or
// its resourceVersion changed.
func (l *lease) observe(o *httpwatch.Object, now time.Time) {
	if l.observed == nil || l.observed.ResourceVersion() != o.ResourceVersion() ||
		recordOf(l.observed) != recordOf(o) {
		l.observedTime = now
	}
	l.observed = o
}

// expiresIn is how long until another holder's lease expires by this
// candidate's observation; false if no other identity holds it.
func (l *lease) expiresIn() (time.Duration, bool) {
	h := l.holder()
	if h == "" || h == l.identity {
		return 0, false
	}
	d := time.Duration(recordOf(l.observed).LeaseDurationSeconds) * time.Second
	return l.observedTime.Add(d).Sub(l.clock.Now()), true
}

// holder is the identity in the last record seen, "" if none.
func (l *lease) holder() string {
	if l.observed == nil {
		return ""
	}
	return recordOf(l.observed).HolderIdentity
}

func (l *lease) seconds() int { return int((l.duration + time.Second - 1) / time.Second) }

// encode renders the lease to write: cur's object (metadata, including its
// resourceVersion for the optimistic-concurrency check, and any fields
// this package does not know) with rec as its spec.
func (l *lease) encode(cur *httpwatch.Object, rec Record) []byte {
	obj := map[string]any{}
	if cur != nil {
		_ = json.Unmarshal(cur.Raw(), &obj)
	} else {
		obj["metadata"] = map[string]any{"name": l.name}
	}
	obj["apiVersion"], obj["kind"] = "coordination.k8s.io/v1", "Lease"
	obj["spec"] = rec.spec()
	b, _ := json.Marshal(obj)
	return b
}
