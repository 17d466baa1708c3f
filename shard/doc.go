// Package shard divides the keys of a resource among the replicas of a
// controller: each replica holds a membership Lease (coordination.k8s.io/v1,
// through httpwatch's client), the live members form a ring, and each key
// ("namespace/name") belongs to one member by rendezvous hashing (Owner).
// A replica caches only its keys (Member.Source filters the informer's
// list and watch) and processes a key only when Member.Acquire says it
// may; keys change hands safely when members join, leave or die.
//
// Minimal use:
//
//	var inf *listwatch.Informer
//	m, err := shard.New(shard.Config{
//		Leases: leases, Group: "my-controller", Identity: podName,
//		OnChange: func([]string) { inf.Relist() }, // keys gained arrive, keys lost leave
//	})
//	if err != nil {
//		return err
//	}
//	inf = listwatch.NewInformer(m.Source(client.Resource(configMaps)), 0)
//	go m.Run(ctx)
//	go inf.Run(ctx)
//	// in each worker, for each key from the queue:
//	kctx, release, err := m.Acquire(ctx, key)
//	if err == nil {
//		err = reconcile(kctx, key)
//		release()
//	}
//	// shard.ErrNotOwned: another replica owns the key by this view. Drop
//	// it once the informer no longer holds it; until then queue it again
//	// later, since the ring may turn back before the relist drops it.
//	// Before the member's first round Acquire waits: nobody owns it yet.
//
// Failed lease requests reach Config.OnError and, once per distinct
// failure, Config.Logger (a 403 at Error, with the grant to make); Run
// keeps retrying them, but returns ErrNotServed when the server does not
// serve leases.
//
// # Membership
//
// Every RetryPeriod a member renews its own lease (named Group-Identity,
// labelled GroupLabel=Group) with the lease core package leader uses, then
// lists the group's leases. A lease counts as live while it has a holder
// and has changed within its leaseDurationSeconds by this member's clock,
// from when this member saw it change; another machine's timestamps are
// never compared. A lease that disappears (deleted under its holder) keeps
// counting, with its last claim, until it expires the same way; its holder
// creates it again at its next round. The live holders are the member's
// view. A lease seen expired is evicted: its holder is cleared by an update conditional on the
// resourceVersion observed, so a renewal still in flight fails.
//
// # Handover protocol
//
// Each member publishes, in its lease's MembersAnnotation, the set of
// members it has acknowledged: a promise that it processes no key that
// set gives to another member. A member changes the set it publishes to
// its view only once every key it holds (Acquire without release) is its
// own under the view; Acquire refuses keys the view gives to others, and
// their contexts are cancelled when the view changes, so the drain ends.
//
// A member hands out key k (Acquire) only when
//
//  1. its view and its published set both give k to itself, and its last
//     attempt to publish a new set did not fail (a write whose reply is
//     lost may have reached the server: until a write succeeds, the member
//     cannot tell which set the others read);
//  2. it has renewed its lease within RenewDeadline;
//  3. it has listed the group's leases after it last published (a new
//     set, or a renewal after its deadline passed), and in that list no
//     other lease with a holder publishes a set that gives k to its holder.
//
// Why a key is never processed by two members at once: take members P and
// Q both holding k. Each published a set giving k to itself, then listed.
// Say P published first. If Q's list was after P's publication, Q saw P's
// claim and would not hand k out; so Q listed before P published, but Q
// published before it listed, so P's list, after P's publication, saw Q's
// claim. Either way one of them refused. A claim is withdrawn only by
// publishing a set without k, which happens only after k was released.
// Lists without a resourceVersion are linearizable reads, which is what
// this needs. The one other way a claim disappears is eviction: the evicted
// member's last successful renewal was sent no later than the others
// observed it, and it stops handing out keys, and cancels those it holds,
// RenewDeadline after that send, before anyone can evict it LeaseDuration
// after observing it (RenewDeadline < LeaseDuration, clocks running at the
// same rate). As with leader election, code that ignores a cancelled
// context after a stall (a process paused for longer than LeaseDuration)
// is the gap no lease can close: check the context before each write.
//
// # Bounds
//
// A key is never processed by two replicas at once. A dead replica's keys
// move within LeaseDuration + RetryPeriod of its last renewal (plus the
// time of the requests that follow): the others see that renewal at their
// next round, wake when it expires, evict it, publish and list. A replica
// that leaves (Run's context ends) releases its lease once its keys are
// released, and its keys move within a RetryPeriod. A replica that joins
// gets its keys within two rounds: the losers see it and publish at their
// next round, and the joiner sees that at its own. A loser busy on a key
// holds up every key it loses until it finishes: the set is published
// whole.
//
// # Exactly once per change
//
// A change is a new resourceVersion of a key. While the ring is stable,
// only the key's owner caches the key and hears of its changes, so each
// change is queued by exactly one replica, and reconciled by it once (a
// reconcile of the latest version covers the changes that arrived while
// the key was queued; a failed reconcile is retried). When the ring
// changes, the member calls OnChange and its informer relists: keys gained
// arrive as adds, keys lost leave as deletes (finalStateUnknown), and keys
// kept are not notified again (a relist of an unchanged object is a
// resync). A key gained is thus reconciled once more, by the gainer, at
// the version it finds, after the loser let go: the gainer cannot know
// whether the loser finished, so a reconcile must be idempotent.
//
// Two consequences for the code that uses a Member. A key refused with
// ErrNotOwned while the informer still holds it must be tried again
// later rather than dropped: should the ring turn back before the relist
// has run, the key stays cached, no notification comes, and a change the
// other member never handled would be lost. And an object deleted while
// its key changes hands is seen deleted by neither member (the gainer
// never cached it), so state kept outside the object is cleaned up by a
// finalizer, not by noticing the delete; a member drops what it kept for
// the keys it loses.
package shard
