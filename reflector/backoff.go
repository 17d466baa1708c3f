package reflector

import (
	"cmp"
	"time"
)

// Backoff spaces out retries after failures: each delay is drawn from
// [d, d+Jitter·d) where d starts at Initial and grows by Factor up to Cap.
// When ResetAfter has passed since the sequence last started over, it starts
// over at Initial, so a reflector that has been healthy for a while retries
// quickly again. A zero field is DefaultBackoff's, so the zero value is
// the reflector's default; a negative one is off: a negative Initial never
// waits, Cap no cap, Factor no growth, Jitter none, ResetAfter never
// starts over.
type Backoff struct {
	Initial    time.Duration
	Cap        time.Duration
	Factor     float64
	Jitter     float64
	ResetAfter time.Duration

	progress
}

// progress is where a backoff sequence stands. A Reflector keeps it in its
// state and leaves its Backoff field as configured.
type progress struct {
	next    time.Duration
	resetAt time.Time
	// network: the last step was taken for a failure the server did not
	// answer (the network, a silent watch). The server's next answer
	// drops the steps such failures climbed (decision 38).
	network bool
}

// DefaultBackoff returns client-go's reflector backoff: 800 ms doubling to
// 30 s, full jitter, starting over after 2 minutes.
func DefaultBackoff() Backoff {
	return Backoff{Initial: 800 * time.Millisecond, Cap: 30 * time.Second, Factor: 2, Jitter: 1, ResetAfter: 2 * time.Minute}
}

// Next returns the delay before the next retry. now is the current time and
// random a number in [0, 1) (both parameters so tests need no real clock).
func (b *Backoff) Next(now time.Time, random float64) time.Duration {
	var d time.Duration
	d, b.progress = b.step(b.progress, now, random)
	return d
}

// step is Next for a sequence kept elsewhere: it returns the delay and
// where the sequence stands after it.
func (b *Backoff) step(p progress, now time.Time, random float64) (time.Duration, progress) {
	def := DefaultBackoff()
	b = &Backoff{Initial: cmp.Or(b.Initial, def.Initial), Cap: cmp.Or(b.Cap, def.Cap), Factor: cmp.Or(b.Factor, def.Factor),
		Jitter: cmp.Or(b.Jitter, def.Jitter), ResetAfter: cmp.Or(b.ResetAfter, def.ResetAfter)}
	if b.Initial < 0 {
		return 0, p
	}
	if p.next == 0 || (b.ResetAfter > 0 && now.Sub(p.resetAt) > b.ResetAfter) {
		p.next = b.Initial
		p.resetAt = now
	}
	d := p.next
	if b.Factor > 1 {
		grown := time.Duration(float64(p.next) * b.Factor)
		if b.Cap > 0 && grown > b.Cap {
			grown = b.Cap
		}
		p.next = grown
	}
	if b.Jitter > 0 {
		d += time.Duration(random * b.Jitter * float64(d))
	}
	return d, p
}
