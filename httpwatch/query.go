package httpwatch

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Values encodes the options as query parameters, leaving out those at their
// zero value (a zero or negative Limit or TimeoutSeconds is not sent). With
// watch set it adds watch=1.
func (o ListOptions) Values(watch bool) url.Values {
	q := url.Values{}
	if o.LabelSelector != "" {
		q.Set("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		q.Set("fieldSelector", o.FieldSelector)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.Continue != "" {
		q.Set("continue", o.Continue)
	}
	if o.ResourceVersion != "" {
		q.Set("resourceVersion", o.ResourceVersion)
	}
	if o.ResourceVersionMatch != "" {
		q.Set("resourceVersionMatch", o.ResourceVersionMatch)
	}
	if o.TimeoutSeconds > 0 {
		q.Set("timeoutSeconds", strconv.FormatInt(o.TimeoutSeconds, 10))
	}
	if o.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.SendInitialEvents {
		q.Set("sendInitialEvents", "true")
	}
	if watch {
		q.Set("watch", "1")
	}
	return q
}

// ParseListOptions reads list or watch options from a request's query as
// the API server reads them, the inverse of ListOptions.Values, for fake
// servers: a boolean is true when present and not one of 0, f, false, n,
// no or off, in any case (so "?watch" alone is true); an integer that does
// not parse is an error in the server's words. watch reports whether the
// request asked for a watch. Unknown parameters are ignored, as the API
// server does.
func ParseListOptions(q url.Values) (opts ListOptions, watch bool, err error) {
	opts.LabelSelector = q.Get("labelSelector")
	opts.FieldSelector = q.Get("fieldSelector")
	opts.Continue = q.Get("continue")
	opts.ResourceVersion = q.Get("resourceVersion")
	opts.ResourceVersionMatch = q.Get("resourceVersionMatch")
	if opts.Limit, err = parseInt(q, "limit"); err != nil {
		return ListOptions{}, false, err
	}
	if opts.TimeoutSeconds, err = parseInt(q, "timeoutSeconds"); err != nil {
		return ListOptions{}, false, err
	}
	opts.AllowWatchBookmarks = parseBool(q, "allowWatchBookmarks")
	opts.SendInitialEvents = parseBool(q, "sendInitialEvents")
	return opts, parseBool(q, "watch"), nil
}

func parseInt(q url.Values, name string) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid %s %q: must be an integer", name, v)
	}
	return n, nil
}

func parseBool(q url.Values, name string) bool {
	vs, ok := q[name]
	if !ok || len(vs) == 0 {
		return false
	}
	switch strings.ToLower(vs[0]) {
	case "0", "f", "false", "n", "no", "off":
		return false
	}
	return true
}
