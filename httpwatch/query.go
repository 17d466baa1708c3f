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

// ParseListOptions reads list or watch options from a request's query, the
// inverse of ListOptions.Values, for fake servers. Booleans accept 1, true
// and yes (and 0, false, no), in any case; watch reports whether the request
// asked for a watch. Unknown parameters are ignored, as the API server does.
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
	for _, b := range []struct {
		name string
		dst  *bool
	}{
		{"allowWatchBookmarks", &opts.AllowWatchBookmarks},
		{"sendInitialEvents", &opts.SendInitialEvents},
		{"watch", &watch},
	} {
		if *b.dst, err = parseBool(q, b.name); err != nil {
			return ListOptions{}, false, err
		}
	}
	return opts, watch, nil
}

func parseInt(q url.Values, name string) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("query parameter %s=%q: want a non-negative integer", name, v)
	}
	return n, nil
}

func parseBool(q url.Values, name string) (bool, error) {
	switch v := q.Get(name); strings.ToLower(v) {
	case "", "0", "false", "no":
		return false, nil
	case "1", "true", "yes":
		return true, nil
	default:
		return false, fmt.Errorf("query parameter %s=%q: want 1, true or yes (or 0, false, no)", name, v)
	}
}
