package apiserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Column is one column of a Table, as a metav1.TableColumnDefinition.
// Columns with a Priority above 0 are those kubectl shows only with -o
// wide; the server always fills them.
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

// Printer turns stored objects into the rows of a Table: Cells gives one
// cell per column, each a string, an int64, a float64, a bool or nil,
// from the object's JSON; now is what ages are measured from.
type Printer struct {
	Columns []Column
	Cells   func(obj gjson.Result, now time.Time) []any
}

// ListMeta is the list metadata a Table of a list carries.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

// IncludeObject is what each row of a Table carries besides its cells:
// the object's metadata (the default), the whole object, or nothing.
type IncludeObject string

// The includeObject values the real server accepts.
const (
	IncludeMetadata IncludeObject = "Metadata"
	IncludeWhole    IncludeObject = "Object"
	IncludeNone     IncludeObject = "None"
)

// ParseIncludeObject reads the includeObject query parameter, answering
// the real server's 400 for a value it does not know.
func ParseIncludeObject(v string) (IncludeObject, *Error) {
	switch IncludeObject(v) {
	case "", IncludeMetadata:
		return IncludeMetadata, nil
	case IncludeWhole, IncludeNone:
		return IncludeObject(v), nil
	}
	return "", &Error{Code: http.StatusBadRequest, Reason: "BadRequest", Message: fmt.Sprintf("unrecognized includeObject value: %q", v)}
}

// TableRequest says how to lay out a Table.
type TableRequest struct {
	Output  Output
	Include IncludeObject
	// NoHeaders leaves columnDefinitions out (null), as the real server
	// does for every watch event after the first.
	NoHeaders bool
	Now       time.Time
}

// AppendTable appends to b the Table of objs, each an object's JSON
// with its kind and apiVersion, in the layout of the real server. A row
// carries the object's metadata or the object itself as stored, not
// re-encoded.
func AppendTable(b []byte, p Printer, objs [][]byte, meta ListMeta, tr TableRequest) []byte {
	v := tr.Output.TableVersion
	if v == "" {
		v = "v1"
	}
	b = append(b, `{"kind":"Table","apiVersion":"meta.k8s.io/`+v+`","metadata":`...)
	m, _ := json.Marshal(meta) // strings and an int
	b = append(b, m...)
	b = append(b, `,"columnDefinitions":`...)
	if tr.NoHeaders {
		b = append(b, "null"...)
	} else {
		cols, _ := json.Marshal(p.Columns)
		b = append(b, cols...)
	}
	b = append(b, `,"rows":[`...)
	for i, o := range objs {
		if i > 0 {
			b = append(b, ',')
		}
		obj := gjson.ParseBytes(o)
		cells, _ := json.Marshal(p.Cells(obj, tr.Now)) // strings, numbers, bools
		b = append(b, `{"cells":`...)
		b = append(b, cells...)
		b = append(b, `,"object":`...)
		switch tr.Include {
		case IncludeWhole:
			b = append(b, o...)
		case IncludeNone:
			b = append(b, "null"...)
		default:
			b = append(b, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/`+v+`","metadata":`...)
			b = append(b, metadataWithout(obj.Get("metadata"), "managedFields")...)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// metadataWithout is the raw metadata object with one key left out, cut
// from the stored bytes.
func metadataWithout(m gjson.Result, key string) string {
	f := m.Get(key)
	if !f.Exists() || f.Index == 0 {
		return m.Raw
	}
	// f.Index is the value's offset in the whole document: cut the key,
	// its value and one neighbouring comma out of m.Raw.
	raw := m.Raw
	valStart := f.Index - m.Index
	valEnd := valStart + len(f.Raw)
	keyStart := strings.LastIndex(raw[:valStart], `"`+key+`"`)
	if keyStart < 0 {
		return raw
	}
	before := strings.TrimRight(raw[:keyStart], " \t\r\n")
	after := strings.TrimLeft(raw[valEnd:], " \t\r\n")
	switch {
	case strings.HasSuffix(before, ","):
		return before[:len(before)-1] + after
	case strings.HasPrefix(after, ","):
		return before + after[1:]
	}
	return before + after
}

// Age prints the time since t as the real server's tables do ("5s",
// "3m12s", "4h", "2d3h", "3y"); "<unknown>" for no time at all.
func Age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return humanDuration(now.Sub(t))
}

func humanDuration(d time.Duration) string {
	secs := int(d.Seconds())
	switch {
	case secs < -1:
		return "<invalid>"
	case secs < 0:
		return "0s"
	case secs < 120:
		return strconv.Itoa(secs) + "s"
	}
	mins := int(d / time.Minute)
	hours := int(d / time.Hour)
	days := hours / 24
	years := days / 365
	both := func(a int, au string, b int, bu string) string {
		if b == 0 {
			return strconv.Itoa(a) + au
		}
		return strconv.Itoa(a) + au + strconv.Itoa(b) + bu
	}
	switch {
	case mins < 10:
		return both(mins, "m", int(d/time.Second)%60, "s")
	case mins < 180:
		return strconv.Itoa(mins) + "m"
	case hours < 8:
		return both(hours, "h", mins%60, "m")
	case hours < 48:
		return strconv.Itoa(hours) + "h"
	case hours < 24*8:
		return both(days, "d", hours%24, "h")
	case hours < 24*365*2:
		return strconv.Itoa(days) + "d"
	case hours < 24*365*8:
		return both(years, "y", days%365, "d")
	}
	return strconv.Itoa(years) + "y"
}

// timeAt reads an RFC 3339 time; the zero time when it is absent or bad.
func timeAt(r gjson.Result) time.Time {
	t, _ := time.Parse(time.RFC3339, r.String())
	return t
}

func age(o gjson.Result, now time.Time) string {
	return Age(timeAt(o.Get("metadata.creationTimestamp")), now)
}
