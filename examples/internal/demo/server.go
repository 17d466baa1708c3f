package demo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/watchtest"
)

// Server is a running watchtest.Server with the pod changes of Churn.
type Server struct {
	*watchtest.Server
	churning sync.WaitGroup
}

// NewServer starts a server holding pods. Its bookmarks come every ten
// seconds, as a real server's roughly do, rather than watchtest's minute.
func NewServer(pods ...Pod) (*Server, error) {
	s := &Server{Server: watchtest.NewUnstartedServer()}
	s.BookmarkInterval = 10 * time.Second
	s.Start()
	for _, p := range pods {
		if err := s.CreatePod(p); err != nil {
			s.Close()
			return nil, fmt.Errorf("demo server: %w", err)
		}
	}
	return s, nil
}

// CreatePod adds p.
func (s *Server) CreatePod(p Pod) error {
	_, err := s.Create(watchtest.Pods, p.object())
	return err
}

// UpdatePod replaces the pod named like p with p.
func (s *Server) UpdatePod(p Pod) error {
	_, err := s.Update(watchtest.Pods, p.object())
	return err
}

// DeletePod deletes a pod.
func (s *Server) DeletePod(namespace, name string) error {
	_, err := s.Delete(watchtest.Pods, namespace, name)
	return err
}

// Churn calls change every interval, in the background, until ctx is done.
// Its errors are ignored: a change often meets a pod an earlier one
// deleted, and the demo just moves on.
func (s *Server) Churn(ctx context.Context, every time.Duration, change func() error) {
	s.churning.Go(func() {
		cli.Every(ctx, every, func() { _ = change() })
	})
}

// Close waits for every Churn to end, so call it after their ctx is done,
// and then shuts the server down.
func (s *Server) Close() {
	s.churning.Wait()
	s.Server.Close()
}

// OnDemand is a demo server started only if a command chooses it, and kept
// for the command to churn once it has shown the demo's starting state. Its
// Start method is a cli.Demo, for cli.Connect.
type OnDemand struct {
	// Pods are what the server starts with.
	Pods []Pod
	// Setup, if set, prepares the server once it started (ConfigMapWorld).
	Setup func(*Server) error
	// Server is the server once started.
	Server *Server
}

// Start starts the server. closeFn is Server.Close.
func (d *OnDemand) Start(context.Context) (host string, closeFn func(), err error) {
	if d.Server, err = NewServer(d.Pods...); err != nil {
		return "", nil, err
	}
	if d.Setup != nil {
		if err := d.Setup(d.Server); err != nil {
			d.Server.Close()
			return "", nil, fmt.Errorf("demo server: %w", err)
		}
	}
	return d.Server.URL, d.Server.Close, nil
}
