package chaos

import (
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/listwatch/listwatch/testkit/testlog"
)

// capture keeps every line the proxied side logs, so a fault's lines can
// be read by position (mark, since).
type capture struct{ *testlog.Log }

func newCapture() (*slog.Logger, *capture) {
	logger, log := testlog.NewLogger()
	return logger, &capture{log}
}

// mark is the position of the next line.
func (c *capture) mark() int { return len(c.Lines(slog.LevelDebug)) }

// since returns the lines logged at level or above from position i on.
func (c *capture) since(i int, level slog.Level) []testlog.Line {
	var out []testlog.Line
	for _, r := range c.Lines(slog.LevelDebug)[i:] {
		if r.Level >= level {
			out = append(out, r)
		}
	}
	return out
}

// logCheck is what a fault may log at Warn or above through the client
// behind the proxy: each line must match one of allowed (it says what
// happened); a speaker says a thing once per outage, that is again only
// after it said, at Info, that it recovered; at most max lines in all.
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
// fault, empty when nothing is.
func (lc logCheck) problems(lines []testlog.Line) []string {
	var out []string
	said := map[string]int{}
	warned := 0
	for _, r := range lines {
		if r.Level < slog.LevelWarn {
			if r.Level == slog.LevelInfo {
				recovered(said, component(r.Msg))
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
		if said[speaker(r)]++; said[speaker(r)] == 2 {
			out = append(out, "said twice in one outage: "+r.String())
		}
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

func speaker(r testlog.Line) string {
	return r.Msg + strings.Join(speakerAttrs.FindAllString(r.Text, -1), "")
}
