package httpwatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/internal/redact"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"golang.org/x/time/rate"
)

// Client speaks to one API server. Create it with NewClient; address a
// resource with Resource. A Client is safe for concurrent use; change its
// fields only before the first request.
//
// Non-streaming requests (list pages, get and every write) are
// retried on connection errors, 429 and 5xx (except 501 and a
// ResourceVersionTooLarge 504, which the reflector must see at once), with
// exponential backoff and jitter that honours Retry-After. Writes are retried
// only when the server asked (429, Retry-After) or the connection was
// refused, since a write that reached the server must not be repeated
// blindly. Other 4xx fail at once with a *StatusError. Watches are never
// retried here: the reflector owns that loop.
//
// Every request, watches included, waits for the client-side rate limiter
// built from Config.QPS and Config.Burst.
type Client struct {
	// RetryMax is how many times a failed request is retried (so at most
	// RetryMax+1 attempts). NewClient sets 4.
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the wait between attempts: it
	// doubles from RetryWaitMin up to RetryWaitMax, then a random part of
	// it is dropped (up to half) so clients do not retry in step. A
	// Retry-After from the server replaces the computed wait, capped at
	// RetryWaitMax. NewClient sets 500ms and 30s.
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxFrameSize bounds one watch frame, one list item and the answer
	// to one Get, Create, Update, Patch or Delete (a DeleteCollection's
	// answer is read up to it, then dropped). NewClient sets
	// raw.DefaultMaxFrameSize.
	MaxFrameSize int
	// WatchHeaderTimeout bounds the wait for a watch's response headers,
	// which the API server sends once the watch is registered. The stream
	// itself has no time limit. Zero means no limit. NewClient sets a
	// minute: the API server sends them as soon as the watch is
	// registered, and a minute, its own limit on ordinary requests,
	// covers queueing under load.
	WatchHeaderTimeout time.Duration
	// Metrics, if set, observes every attempt of every request, watches
	// included (a retried request once per attempt), so that latency,
	// status codes and errors can be exported by verb and resource, as
	// Prometheus users do with client-go's rest_client metrics. It is
	// called on the requesting goroutine: it must be quick and must not
	// call the client.
	Metrics func(RequestInfo)
	// Logger receives the client's own messages: failed attempts at
	// Debug, the server's warnings at Warn; failures are said by whoever
	// meets them (decision 38). NewClient sets slog.Default(); a Factory
	// made from the client passes it on to every informer.
	Logger *slog.Logger

	host      *url.URL
	list      *http.Client // cfg.Timeout per attempt
	watch     *http.Client // WatchHeaderTimeout for the headers; timeoutSeconds and the context bound the stream
	limiter   *rate.Limiter
	clock     clock.Clock
	discovery *discovery.Cache
	warnings  warned
	// pingTimeout is the HTTP/2 health check's, to explain a connection
	// it closed.
	pingTimeout time.Duration
	// bookmarks is what the client has learned of its server's bookmarks
	// (bookmarksHoped, ...; see newWatchdog).
	bookmarks atomic.Int32
}

// NewClient returns a client for the server cfg describes. It uses only
// cfg.Host, cfg.QPS and cfg.Burst (QPS 0 means 50, below 0 unlimited;
// Burst 0 means 100), cfg.RequestTimeout (per attempt of a
// non-streaming request; never applied to watches), cfg.HealthCheck (to
// explain a connection it closed), cfg.Clock and cfg.RoundTripper (TLS,
// credentials).
func NewClient(cfg *kubeconfig.Config) (*Client, error) {
	if cfg == nil || cfg.Host == "" {
		return nil, errors.New("httpwatch: new client: no host in config")
	}
	host, err := url.Parse(cfg.Host)
	if err != nil {
		// url.Error repeats the URL, password and all; its Err does not.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("httpwatch: new client: host %q: %w", redact.URL(cfg.Host), err)
	}
	if host.Scheme != "http" && host.Scheme != "https" || host.Host == "" {
		return nil, fmt.Errorf("httpwatch: new client: host %q: want http(s)://host[:port]", host.Redacted())
	}
	rt, err := cfg.RoundTripper()
	if err != nil {
		return nil, fmt.Errorf("httpwatch: new client: %w", err)
	}
	c := &Client{
		RetryMax:           4,
		RetryWaitMin:       500 * time.Millisecond,
		RetryWaitMax:       30 * time.Second,
		MaxFrameSize:       raw.DefaultMaxFrameSize,
		WatchHeaderTimeout: time.Minute,
		Logger:             slog.Default(),
		host:               host,
		clock:              cfg.Clock,
	}
	_, c.pingTimeout = cfg.HealthCheck()
	if c.clock == nil {
		c.clock = clock.Real
	}
	c.discovery = discovery.New(fetcher{c})
	c.discovery.Clock = c.clock
	rt = &measured{next: rt, c: c}
	// The header timer starts after the rate limiter's wait.
	var watchRT http.RoundTripper = &headerTimeout{next: rt, c: c}
	if qps, burst := cfg.Rate(); !math.IsInf(qps, 1) {
		c.limiter = rate.NewLimiter(rate.Limit(qps), burst)
		rt = &limited{next: rt, limiter: c.limiter}
		watchRT = &limited{next: watchRT, limiter: c.limiter}
	}
	c.list = &http.Client{Transport: rt, Timeout: cfg.RequestTimeout()}
	c.watch = &http.Client{Transport: watchRT}
	return c, nil
}

// limited makes every request wait for the client-side rate limiter, but
// for the later pages of a ListAll: a list pays once, when it starts.
type limited struct {
	next    http.RoundTripper
	limiter *rate.Limiter
}

// continuation marks the context of a ListAll page after the first. Such a
// page exists only because the list's first request was let through, and
// one list asks for one page at a time; charging each page would make a
// long list wait on the limiter for no protection (300 pages at 50 QPS
// after a burst of 100: 4 s of waiting for 150,000 pods).
type continuation struct{}

func (l *limited) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Context().Value(continuation{}) != nil {
		return l.next.RoundTrip(r)
	}
	if err := l.limiter.Wait(r.Context()); err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, fmt.Errorf("client rate limiter: %w", err)
	}
	return l.next.RoundTrip(r)
}

// CloseIdleConnections closes the transport's idle keep-alive connections
// (and with them their reader goroutines), for a clean shutdown.
func (c *Client) CloseIdleConnections() { c.list.CloseIdleConnections() }

func (l *limited) CloseIdleConnections() {
	if ci, ok := l.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// request is one non-streaming call.
type request struct {
	method string
	path   string // escaped URL path
	query  url.Values
	accept string
	body   []byte
	// contentType of the body; "" means application/json.
	contentType string
}

// do sends a non-streaming request with retries. On success the caller owns
// (and closes) the response body; any non-2xx status becomes a *StatusError.
func (c *Client) do(ctx context.Context, rq request) (*http.Response, error) {
	full := c.host.JoinPath(rq.path) // keeps a path prefix in Host (a proxy's)
	full.RawQuery = rq.query.Encode()

	var body any
	if rq.body != nil {
		body = rq.body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, rq.method, full.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", rq.method, rq.path, err)
	}
	req.Header.Set("Accept", rq.accept)
	if rq.body != nil {
		ct := rq.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	rc := &retryablehttp.Client{
		HTTPClient:   c.list,
		RetryWaitMin: c.RetryWaitMin,
		RetryWaitMax: c.RetryWaitMax,
		RetryMax:     c.RetryMax,
		CheckRetry:   c.retryPolicy(rq.method),
		Backoff:      c.backoff,
		ErrorHandler: func(resp *http.Response, err error, attempts int) (*http.Response, error) {
			if err == nil && resp != nil {
				se := statusFromResponse(rq.method, rq.path, resp, c.clock.Now())
				resp.Body.Close()
				return nil, fmt.Errorf("giving up after %d attempts: %w", attempts, se)
			}
			if resp != nil {
				resp.Body.Close()
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s %s: %w", rq.method, rq.path, err)
			}
			return nil, fmt.Errorf("%s %s: giving up after %d attempts: %w", rq.method, rq.path, attempts, err)
		},
	}
	resp, err := rc.Do(req)
	if err != nil {
		if err == ctx.Err() {
			// The context ended between attempts; the error handler, which
			// names the request, was not called.
			return nil, fmt.Errorf("%s %s: %w", rq.method, rq.path, err)
		}
		return nil, err
	}
	c.logWarnings(rq, resp.Header)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, statusFromResponse(rq.method, rq.path, resp, c.clock.Now())
	}
	return resp, nil
}

// retryPolicy decides whether an attempt is retried.
func (c *Client) retryPolicy(method string) retryablehttp.CheckRetry {
	idempotent := method == http.MethodGet || method == http.MethodHead
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if err != nil {
			if IsPermanent(err) || !idempotent && !isConnectionRefused(err) {
				return false, err // a certificate that fails now, or a missing plugin, fails every time
			}
			return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
		}
		code := resp.StatusCode
		switch {
		case code == http.StatusTooManyRequests:
			return true, nil
		case code < 500 || code == http.StatusNotImplemented:
			return false, nil
		case !idempotent && resp.Header.Get("Retry-After") == "":
			return false, nil
		}
		// A 5xx: retry, unless it is the server saying its cache is behind
		// the resourceVersion asked for; the reflector answers that one by
		// listing at "" instead of waiting. The body is small: keep it for
		// the caller.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, redact.BodyLimit))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		if IsResourceVersionTooLarge(statusFromBody("", "", code, resp.Header, b, c.clock.Now())) {
			return false, nil
		}
		return true, nil
	}
}

// backoff doubles from lo up to hi, then drops a random part of up to half
// the wait (so many clients spread out); a Retry-After header replaces it.
func (c *Client) backoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), c.clock.Now()); ok {
			return min(d, hi)
		}
	}
	d := lo
	for range attempt {
		d *= 2
		if d >= hi {
			d = hi
			break
		}
	}
	if d <= 1 {
		return d
	}
	return d - rand.N(d/2)
}

// ErrResponseHeaderTimeout is wrapped by the error of a watch whose server
// sent no response headers within Client.WatchHeaderTimeout.
var ErrResponseHeaderTimeout = errors.New("no response headers")

// headerTimeout fails a request whose response headers do not arrive within
// c.WatchHeaderTimeout. It never limits the body: a watch streams for as
// long as the server keeps it open.
type headerTimeout struct {
	next http.RoundTripper
	c    *Client
}

func (h *headerTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	d := h.c.WatchHeaderTimeout
	if d <= 0 {
		return h.next.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	const waiting, timedOut, answered = 0, 1, 2
	var state atomic.Int32
	timer := h.c.clock.NewTimer(d)
	returned := make(chan struct{})
	go func() {
		select {
		case <-timer.C():
			if state.CompareAndSwap(waiting, timedOut) {
				cancel(ErrResponseHeaderTimeout)
			}
		case <-returned:
		}
	}()
	resp, err := h.next.RoundTrip(req.WithContext(ctx))
	timer.Stop()
	close(returned)
	if !state.CompareAndSwap(waiting, answered) {
		// The timer won, even if an answer came in at the same moment.
		if err == nil {
			resp.Body.Close()
		}
		cancel(nil)
		return nil, fmt.Errorf("%w within %v", ErrResponseHeaderTimeout, d)
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases the request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}
