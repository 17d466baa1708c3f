// Package demo is the embedded API server the example commands run against
// when given no real one: a watchtest.Server holding made-up pods, which
// the command keeps changing so that there is something to watch.
//
//	s, err := demo.NewServer(pods...)
//	if err != nil {
//		return err
//	}
//	defer s.Close() // after ctx is done: Close waits for the churn
//	s.Churn(ctx, 300*time.Millisecond, func() error {
//		return s.UpdatePod(changed)
//	})
package demo
