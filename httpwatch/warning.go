package httpwatch

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// logWarnings logs the Warning headers of a response (RFC 9111 section
// 5.5), the way the API server reports deprecated APIs and, for writes with
// FieldValidationWarn, unknown fields, at Warn level. A read's warning is
// logged once per path and text: an informer would otherwise repeat a
// deprecation warning at every list and watch. A write's is logged every
// time, since it speaks of what was written.
func (c *Client) logWarnings(rq request, h http.Header) {
	if c.Logger == nil {
		return
	}
	for _, w := range h.Values("Warning") {
		text := warningText(w)
		if rq.method == http.MethodGet && !c.warnings.first(rq.path+" "+text) {
			continue
		}
		c.Logger.Warn("httpwatch: server warning", "verb", rq.method, "path", rq.path, "warning", text)
	}
}

// warned remembers the read warnings logged, up to a bound past which
// they are logged again rather than remembered without end.
type warned struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

const maxWarned = 1024

// first reports whether w was not seen before, and remembers it.
func (s *warned) first(w string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[w]; ok {
		return false
	}
	if s.seen == nil || len(s.seen) >= maxWarned {
		s.seen = map[string]struct{}{}
	}
	s.seen[w] = struct{}{}
	return true
}

// warningText is the text of one Warning header value, `299 - "text"`, or
// the value as it is when it has another form.
func warningText(v string) string {
	code, rest, ok := strings.Cut(v, " ")
	if !ok || len(code) != 3 {
		return v
	}
	_, rest, ok = strings.Cut(rest, " ") // the agent, "-" from the API server
	if !ok {
		return v
	}
	if text, err := strconv.Unquote(strings.TrimSpace(rest)); err == nil {
		return text
	}
	return v
}
