// Package processor delivers a shared informer's notifications to its
// handlers: each handler on its own goroutine, behind its own unbounded
// buffer, so a slow handler never holds up the informer or the others.
//
// An informer owns one Processor. It registers handlers with AddHandler,
// Posts every change it applies to its cache and Flushes at the end of each
// batch it pops (so a waiting handler is woken once per batch, not once per
// change), asks ShouldResync on its resync timer, and runs the Processor
// for as long as it runs itself. Distribute is Post and Flush in one, for
// a change on its own:
//
//	p := processor.New[*Pod]()
//	reg, _ := p.AddHandler(processor.HandlerFuncs[*Pod]{
//		AddFunc: func(pod *Pod, _ bool) { queue.Add(pod.Name) },
//	}, 0, nil)
//	go p.Run(ctx)
//	p.Distribute(processor.Added(pod, false))
//	...
//	reg.Remove()
//
// It is client-go's sharedProcessor and processorListener, generic over the
// object type, with these differences, each deliberate:
//
//   - A delete whose final state is unknown passes the last known object
//     and a flag (Handler.OnDelete) instead of a tombstone to unwrap.
//   - A handler with no resync period never receives resync notifications,
//     not even right after it was added (client-go sends them until its
//     first resync check, so a relist floods every handler).
//   - A panicking handler is recovered and reported, not fatal, unless
//     Processor.RePanic is set; no pause follows the panic.
//   - Distribute before Run buffers instead of blocking.
//   - A handler's buffer is a chain of blocks rather than a growing ring:
//     it never copies to grow, and gives memory back block by block as the
//     handler catches up, so a burst does not pin its memory.
//   - On stop, notifications not yet handled are dropped, as upstream does,
//     and Run returns only after every handler goroutine has exited.
package processor
