package apiserve

import (
	"encoding/json"
	"strconv"
)

// Watch event types as the real server spells them.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
	Bookmark = "BOOKMARK"
	Failed   = "ERROR"
)

// Selected is what a watch whose selectors matched the object before a
// change (before) and match it after (now) sees of a change of type typ,
// as the real watch cache sends it: an object that starts matching
// arrives as ADDED, one that stops matching leaves as DELETED (carrying
// its state before the change), and ok is false for a change the watch
// does not see at all.
func Selected(typ string, before, now bool) (seen string, old bool, ok bool) {
	switch typ {
	case Added, Deleted:
		return typ, false, now
	case Modified:
		switch {
		case now && before:
			return Modified, false, true
		case now:
			return Added, false, true
		case before:
			return Deleted, true, true
		}
	}
	return "", false, false
}

// AppendEvent appends one watch event, a line, carrying an object as the
// store holds it (body, whole or without kind and apiVersion, which the
// resource's prefix then gives it), not re-encoded; with t set, carrying it as a
// one-row Table at version rv, whose column definitions only the first
// event of a watch has.
func AppendEvent(b []byte, typ string, prefix, body []byte, rv int64, t *TableOutput) []byte {
	b = append(b, `{"type":"`+typ+`","object":`...)
	if t != nil {
		b = AppendTable(b, t.Printer, [][]byte{Whole(prefix, body)}, ListMeta{ResourceVersion: strconv.FormatInt(rv, 10)}, t.Request)
		t.Request.NoHeaders = true
		return append(b, "}\n"...)
	}
	return append(appendWhole(b, prefix, body), "}\n"...)
}

// AppendBookmark appends a BOOKMARK at version rv, annotated
// k8s.io/initial-events-end when it ends a watch's initial events.
func AppendBookmark(b []byte, prefix []byte, rv int64, initialEnd bool) []byte {
	b = append(b, `{"type":"BOOKMARK","object":`...)
	b = append(b, prefix...)
	b = append(b, `"metadata":{`...)
	if initialEnd {
		b = append(b, `"annotations":{"k8s.io/initial-events-end":"true"},`...)
	}
	b = append(b, `"resourceVersion":"`...)
	b = strconv.AppendInt(b, rv, 10)
	return append(b, "\"}}}\n"...)
}

// AppendError appends an ERROR event carrying e's Status, as the real
// server reports a failure found after a watch's stream started.
func AppendError(b []byte, e *Error) []byte {
	b = append(b, `{"type":"ERROR","object":`...)
	j, _ := json.Marshal(e.Status()) // a struct of strings and ints
	b = append(b, j...)
	return append(b, "}\n"...)
}
