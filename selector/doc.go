// Package selector parses and matches Kubernetes label and field selectors,
// the strings a client sends as labelSelector and fieldSelector.
//
// Label selectors use the full syntax the API server accepts:
//
//	app=web, tier != cache      equality and inequality (= and == are the same)
//	env in (prod, staging)      set membership
//	env notin (dev)             set exclusion; true when the label is absent
//	partition                   the label exists
//	!canary                     the label does not exist
//	replicas > 2, replicas < 9  integer comparison
//
// Requirements are separated by commas and must all hold. Keys and values are
// checked like the server checks them, and a bad selector is reported as a
// *SyntaxError that says at which byte offset the problem is and what was
// expected there.
//
//	sel, err := selector.Parse("app=web,tier in (gold,silver)")
//	if err != nil {
//		return fmt.Errorf("watch pods: %w", err)
//	}
//	sel.Matches(selector.Set{"app": "web", "tier": "gold"}) // true
//
// Field selectors compare dotted paths such as metadata.name, spec.nodeName or
// status.phase with =, == or !=. A path the object does not have reads as the
// empty string, as on the server, so "spec.nodeName=" selects unscheduled
// pods.
//
// The zero Selector and the zero FieldSelector select everything. Both are
// immutable values, safe to share between goroutines.
package selector
