package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/shard"
)

func (e *env) leases() *httpwatch.ResourceClient {
	return e.client.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1",
		Resource: "leases", Namespace: e.o.scale.leaseNamespace})
}

// lead runs the controller only while this replica leads. It returns an
// error wrapping leader.ErrLost when leadership was lost: the process
// exits and starts again as a fresh candidate. A controller that fails
// ends the candidacy too, releasing the lease: the elector would otherwise
// go on renewing it for a leader that does nothing.
func (e *env) lead(ctx context.Context) error {
	sc := e.o.scale
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cerr error
	el, err := leader.New(leader.Config{
		Leases: e.leases(), Name: sc.leaseName, Identity: sc.identity,
		LeaseDuration: sc.leaseDuration, RenewDeadline: sc.renewDeadline, RetryPeriod: sc.retryPeriod,
		ReleaseOnCancel: true,
		OnStartedLeading: func(lctx context.Context) {
			fmt.Fprintf(e.stderr, "leading: %s since %d\n", sc.identity, time.Now().UnixMicro())
			if cerr = e.control(lctx, nil, nil); cerr != nil && lctx.Err() == nil {
				cancel()
			}
		},
		OnStoppedLeading: func() {
			fmt.Fprintf(e.stderr, "stopped leading: %s at %d\n", sc.identity, time.Now().UnixMicro())
		},
		OnNewLeader: func(id string) { fmt.Fprintf(e.stderr, "leader: %s\n", id) },
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "candidate %s for lease %s/%s\n", sc.identity, sc.leaseNamespace, sc.leaseName)
	if err := el.Run(ctx); err != nil {
		return err
	}
	return cerr
}

// shard runs the controller on this replica's share of the keys. It waits
// for --shards members (or --lease-duration) first, so replicas starting
// together do not each begin with every key.
func (e *env) shard(ctx context.Context) error {
	sc := e.o.scale
	var inf atomic.Pointer[listwatch.Informer]
	live := make(chan int, 1)
	m, err := shard.New(shard.Config{
		Leases: e.leases(), Group: sc.leaseName, Identity: sc.identity,
		LeaseDuration: sc.leaseDuration, RenewDeadline: sc.renewDeadline, RetryPeriod: sc.retryPeriod,
		OnChange: func(members []string) {
			fmt.Fprintf(e.stderr, "members: %s at %d\n", strings.Join(members, ","), time.Now().UnixMicro())
			if i := inf.Load(); i != nil {
				i.Relist()
			}
			select {
			case <-live:
			default:
			}
			live <- len(members)
		},
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err := m.Run(ctx)
		if err != nil { // e.g. leases not served: the controller would idle forever
			cancel()
		}
		done <- err
	}()
	fmt.Fprintf(e.stderr, "member %s of group %s/%s\n", sc.identity, sc.leaseNamespace, sc.leaseName)

	wait := time.NewTimer(sc.leaseDuration)
	defer wait.Stop()
waiting:
	for {
		select {
		case n := <-live:
			if n >= sc.shards {
				break waiting
			}
		case <-wait.C:
			break waiting
		case <-ctx.Done():
			break waiting
		}
	}
	err = e.control(ctx, m, inf.Store)
	cancel()
	if merr := <-done; merr != nil {
		err = merr // the member's failure is why the controller stopped
	}
	return err
}
