package processor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/processor"
)

func Example() {
	p := processor.New[string]()
	// The deadline ends the wait if the delete never comes; the Output then differs.
	deleted, sawDelete := context.WithTimeout(context.Background(), 10*time.Second)
	defer sawDelete()
	reg, err := p.AddHandler(processor.HandlerFuncs[string]{
		AddFunc:    func(name string, initial bool) { fmt.Println("add", name, initial) },
		UpdateFunc: func(oldName, newName string) { fmt.Println("update", oldName, "->", newName) },
		DeleteFunc: func(name string, finalStateUnknown bool) {
			fmt.Println("delete", name, finalStateUnknown)
			sawDelete()
		},
	}, 0, []string{"a"}) // "a" is already in the informer's cache
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		p.Run(ctx)
	}()
	p.Distribute(processor.Added("b", false))
	p.Distribute(processor.Updated("b", "b2", false))
	p.Distribute(processor.Deleted("a", true)) // missed by the watch, found gone at a relist

	<-deleted.Done()
	fmt.Println("synced:", reg.HasSynced())
	cancel()
	<-stopped
	// Output:
	// add a true
	// add b false
	// update b -> b2
	// delete a true
	// synced: true
}

func ExampleFilteringHandler() {
	show := processor.HandlerFuncs[int]{
		AddFunc:    func(n int, _ bool) { fmt.Println("add", n) },
		UpdateFunc: func(oldN, newN int) { fmt.Println("update", oldN, newN) },
		DeleteFunc: func(n int, _ bool) { fmt.Println("delete", n) },
	}
	evens := processor.FilteringHandler[int]{Filter: func(n int) bool { return n%2 == 0 }, Handler: show}
	evens.OnUpdate(1, 2) // enters the set
	evens.OnUpdate(2, 4)
	evens.OnUpdate(4, 5) // leaves it
	evens.OnUpdate(5, 7) // never in it
	// Output:
	// add 2
	// update 2 4
	// delete 4
}

func ExampleProcessor_ShouldResync() {
	fake := clock.NewFake(time.Unix(0, 0))
	p := processor.New[string]()
	p.Clock = fake
	reg, err := p.AddHandler(processor.HandlerFuncs[string]{}, 30*time.Second, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("period", reg.ResyncPeriod(), "check every", p.ShortestResyncPeriod())
	for range 4 {
		fake.Step(20 * time.Second)
		fmt.Println(fake.Now().Unix(), p.ShouldResync())
	}
	// Output:
	// period 30s check every 30s
	// 20 false
	// 40 true
	// 60 false
	// 80 true
}
