package httpwatch

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
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
	for _, v := range h.Values("Warning") {
		for _, text := range warningTexts(v) {
			if rq.method == http.MethodGet && !c.warnings.first(rq.path, text) {
				continue
			}
			c.Logger.Warn("httpwatch: server warning", "verb", rq.method, "path", rq.path, "warning", cutWarning(text))
		}
	}
}

// maxWarningLog is how much of a warning's text is logged. The API
// server's are a line; a longer one is a server misbehaving.
const maxWarningLog = 4 << 10

func cutWarning(text string) string {
	if len(text) <= maxWarningLog {
		return text
	}
	cut := maxWarningLog
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", text[:cut], len(text))
}

// warned remembers the read warnings logged, up to a bound past which
// it forgets them all (and so logs them again) rather than grow without
// end. It keeps a hash of each path and text, not the text: a server may
// send a different long warning with every answer.
type warned struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]struct{}
}

const maxWarned = 1024

// first reports whether the warning text on path was not seen before, and
// remembers it.
func (s *warned) first(path, text string) bool {
	h := sha256.New()
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[key]; ok {
		return false
	}
	if s.seen == nil || len(s.seen) >= maxWarned {
		s.seen = map[[sha256.Size]byte]struct{}{}
	}
	s.seen[key] = struct{}{}
	return true
}

// warningTexts parses one Warning header value, a comma-separated list of
// `code agent "text"` with an optional quoted date, and returns the texts.
// The text is an HTTP quoted-string: a backslash quotes the character
// after it, whatever it is; there are no escapes such as \n. A text that
// is not valid UTF-8 or holds a control character is dropped, as is
// everything from the first value not of that form: a log must not show
// what the server wrote as a line or terminal escape of its own.
func warningTexts(v string) []string {
	var texts []string
	rest := v
	for {
		text, after, ok := parseWarning(rest)
		if !ok {
			return texts
		}
		after = strings.TrimLeft(after, " \t")
		if after != "" && after[0] != ',' {
			return texts
		}
		if utf8.ValidString(text) && !strings.ContainsFunc(text, unicode.IsControl) {
			texts = append(texts, text)
		}
		if after == "" {
			return texts
		}
		rest = strings.TrimLeft(after[1:], " \t")
	}
}

// parseWarning reads one warning-value from the start of s: three digits,
// an agent, the quoted text, and perhaps a quoted date.
func parseWarning(s string) (text, rest string, ok bool) {
	if len(s) < 4 || s[3] != ' ' || strings.Trim(s[:3], "0123456789") != "" {
		return "", "", false
	}
	agent, rest, ok := strings.Cut(s[4:], " ")
	if !ok || agent == "" || strings.ContainsAny(agent, "\",\t") {
		return "", "", false
	}
	text, rest, ok = quotedString(rest)
	if !ok {
		return "", "", false
	}
	if strings.HasPrefix(rest, ` "`) {
		if _, rest, ok = quotedString(rest[1:]); !ok {
			return "", "", false
		}
	}
	return text, rest, true
}

// quotedString reads an HTTP quoted-string from the start of s and returns
// its content, unquoted, and what follows it.
func quotedString(s string) (content, rest string, ok bool) {
	if s == "" || s[0] != '"' {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 == len(s) {
				return "", "", false
			}
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
