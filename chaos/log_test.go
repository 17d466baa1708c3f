package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
)

// record is one logged line: its level, its message and its text with every
// attribute as key=value.
type record struct {
	level slog.Level
	msg   string
	text  string
}

func (r record) String() string { return r.level.String() + " " + r.text }

// capture is a slog.Handler keeping every record at Info or above, so a
// fault's lines can be read by position (mark, since).
type capture struct {
	mu    *sync.Mutex
	recs  *[]record
	attrs []slog.Attr
}

func newCapture() (*slog.Logger, *capture) {
	c := &capture{mu: &sync.Mutex{}, recs: &[]record{}}
	return slog.New(c), c
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (c *capture) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	for _, a := range c.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.recs = append(*c.recs, record{level: r.Level, msg: r.Message, text: b.String()})
	return nil
}

func (c *capture) WithAttrs(as []slog.Attr) slog.Handler {
	return &capture{mu: c.mu, recs: c.recs, attrs: append(append([]slog.Attr(nil), c.attrs...), as...)}
}

func (c *capture) WithGroup(string) slog.Handler { return c }

// mark is the position of the next line.
func (c *capture) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(*c.recs)
}

// since returns the lines logged at level or above from position i on.
func (c *capture) since(i int, level slog.Level) []record {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []record
	for _, r := range (*c.recs)[i:] {
		if r.level >= level {
			out = append(out, r)
		}
	}
	return out
}

// logCheck is what a fault may log at Warn or above through the client
// behind the proxy: each line must match one of allowed (it says what
// happened); a speaker says a thing once per outage, that is again only
// after it said, at Info, that it recovered; a lost connection is said
// once per connection, and connections cannot be found silent faster
// than one per PingAfter + PingTimeout; at most max lines in all.
type logCheck struct {
	allowed []*regexp.Regexp
	max     int
}

func allow(max int, patterns ...string) logCheck {
	lc := logCheck{max: max}
	for _, p := range patterns {
		lc.allowed = append(lc.allowed, regexp.MustCompile(p))
	}
	return lc
}

// problems lists what is wrong with lines (Info and above, in order) of a
// fault that lasted d, empty when nothing is.
func (lc logCheck) problems(lines []record, d time.Duration) []string {
	var out []string
	said := map[string]int{}
	warned, lost := 0, 0
	for _, r := range lines {
		if r.level < slog.LevelWarn {
			if r.level == slog.LevelInfo {
				recovered(said, component(r.msg))
			}
			continue
		}
		warned++
		matched := false
		for _, re := range lc.allowed {
			matched = matched || re.MatchString(r.String())
		}
		if !matched {
			out = append(out, "unexpected for this fault: "+r.String())
		}
		if strings.HasPrefix(r.msg, "httpwatch: no answer to an HTTP/2 ping") {
			lost++
			continue
		}
		if said[speaker(r)]++; said[speaker(r)] == 2 {
			out = append(out, "said twice in one outage: "+r.String())
		}
	}
	if most := 1 + int(d/(pingAfter+pingTimeout)); lost > most {
		out = append(out, fmt.Sprintf("%d connections said lost in %s, more than one per ping interval (%d)", lost, d, most))
	}
	if warned > lc.max {
		out = append(out, fmt.Sprintf("%d lines at Warn or above, want at most %d (a flood)", warned, lc.max))
	}
	return out
}

// recovered forgets what the component said: it said it recovered.
func recovered(said map[string]int, comp string) {
	for k := range said {
		if strings.HasPrefix(k, comp+":") {
			delete(said, k)
		}
	}
}

// component is who speaks in msg: "shard member", "reflector", ...
func component(msg string) string {
	c, _, _ := strings.Cut(msg, ":")
	return c
}

// speaker is a line's message and the attributes that name who said it,
// so that two components saying the same words are two speakers.
var speakerAttrs = regexp.MustCompile(` (identity|group|lease|resource|host)=\S+`)

func speaker(r record) string {
	return r.msg + strings.Join(speakerAttrs.FindAllString(r.text, -1), "")
}
