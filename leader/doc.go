// Package leader elects one leader among the replicas of a controller on a
// coordination.k8s.io/v1 Lease, through httpwatch's client, with
// client-go's semantics: LeaseDuration, RenewDeadline and RetryPeriod,
// holder identity, lease transitions, optimistic concurrency on
// resourceVersion, and expiry judged on the local clock.
//
// Minimal use:
//
//	el, err := leader.New(leader.Config{
//		Leases: client.Resource(httpwatch.Resource{Group: "coordination.k8s.io",
//			Version: "v1", Resource: "leases", Namespace: "default"}),
//		Name:            "my-controller",
//		Identity:        podName,
//		ReleaseOnCancel: true,
//		OnStartedLeading: func(ctx context.Context) {
//			runController(ctx) // stop when ctx is done
//		},
//	})
//	if err != nil {
//		return err
//	}
//	return el.Run(ctx)
//
// # Protocol
//
// A candidate reads the Lease every RetryPeriod (plus jitter). It may take
// the lease when nobody holds it, or when the record has not changed for
// LeaseDuration by its own clock since it last saw it change: it never
// compares the timestamps another machine wrote. Taking and renewing are
// updates conditional on the resourceVersion just read; a 409 (a lost
// race, or a create that met an existing lease) is never overwritten, the
// next attempt reads again. A lease deleted under a holder is created
// again only once that holder has expired by the same observation (the
// holder itself creates it at its next renewal).
//
// The leader renews every RetryPeriod. RenewDeadline after it sent its last
// successful renewal, by its own clock, it cancels the context of
// OnStartedLeading, whether or not a renewal is still in flight. Another
// candidate saw that renewal no earlier than it was sent and waits
// LeaseDuration from then, so with RenewDeadline < LeaseDuration the old
// leader's context is done before anyone else can take the lease. For the
// same reason a take whose reply comes RenewDeadline or more after it was
// sent does not start a leader; the candidate reads again. What the
// leader's code does after its context is done is the gap this cannot
// cover: stop promptly. Check reports a leader whose OnStartedLeading has
// not returned long after its deadline.
//
// A leader that dies is replaced within LeaseDuration + (1+JitterFactor) ×
// RetryPeriod of its last renewal; one whose context is cancelled with
// ReleaseOnCancel clears the holder, and is replaced at the next attempt of
// a waiting candidate.
//
// # Failures
//
// Every failed lease request reaches Config.OnError and, without flooding,
// Config.Logger: a 403 is logged once at Error with the grant to make, a
// transient failure once at Warn, repeats as a count, the recovery at
// Info. The candidate keeps trying, except against a server that does not
// serve leases: Run then returns ErrNotServed.
package leader
