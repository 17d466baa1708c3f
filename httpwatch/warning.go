package httpwatch

import (
	"net/http"
	"strconv"
	"strings"
)

// logWarnings logs the Warning headers of a response (RFC 9111 section
// 5.5), the way the API server reports deprecated APIs and, for writes with
// FieldValidationWarn, unknown fields, at Warn level.
func (c *Client) logWarnings(rq request, h http.Header) {
	if c.Logger == nil {
		return
	}
	for _, w := range h.Values("Warning") {
		c.Logger.Warn("httpwatch: server warning", "verb", rq.method, "path", rq.path, "warning", warningText(w))
	}
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
