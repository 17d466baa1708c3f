package apiserve

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// columns.json holds the real server's column definitions for the
// resources printed here, recorded from kube-apiserver 1.37.2 (its
// descriptions are the API's own documentation), keyed "GROUP/RESOURCE";
// "" is the default for a resource without a printer of its own.
//
//go:embed columns.json
var columnsJSON []byte

var recordedColumns = func() map[string][]Column {
	var m map[string][]Column
	if err := json.Unmarshal(columnsJSON, &m); err != nil {
		panic("apiserve: columns.json: " + err.Error())
	}
	return m
}()

// cellsByResource prints each resource as the real server's printer for
// it does, wide columns included.
var cellsByResource = map[string]func(o gjson.Result, now time.Time) []any{
	"/pods": podCells,
	"/configmaps": func(o gjson.Result, now time.Time) []any {
		return []any{name(o), int64(count(o, "data") + count(o, "binaryData")), age(o, now)}
	},
	"/secrets": func(o gjson.Result, now time.Time) []any {
		return []any{name(o), o.Get("type").String(), int64(count(o, "data")), age(o, now)}
	},
	"/namespaces":          func(o gjson.Result, now time.Time) []any { return []any{name(o), phase(o, "Active"), age(o, now)} },
	"apps/deployments":     deploymentCells,
	"/services":            serviceCells,
	"/nodes":               nodeCells,
	"/events":              eventCells,
	"events.k8s.io/events": eventCells,
	"coordination.k8s.io/leases": func(o gjson.Result, now time.Time) []any {
		return []any{name(o), o.Get("spec.holderIdentity").String(), age(o, now)}
	},
}

// PrinterFor returns the real server's printer for a built-in resource,
// or its default one (Name, Created At) for a resource without one here:
// where the real server has a printer of its own for that resource, an
// approximation.
func PrinterFor(group, resource string) Printer {
	k := group + "/" + resource
	if cells, ok := cellsByResource[k]; ok {
		return Printer{Columns: recordedColumns[k], Cells: cells}
	}
	return Printer{Columns: recordedColumns[""], Cells: func(o gjson.Result, _ time.Time) []any {
		return []any{name(o), o.Get("metadata.creationTimestamp").String()}
	}}
}

// PrinterColumn is one of a CustomResourceDefinition's
// additionalPrinterColumns.
type PrinterColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"` // integer, number, string, boolean or date
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
	JSONPath    string `json:"jsonPath"`
}

// CustomPrinter prints a custom resource as the real server does from its
// definition's additionalPrinterColumns: Name, then each column; with none,
// Name and Age, as a definition without columns is defaulted.
func CustomPrinter(cols []PrinterColumn) Printer {
	if len(cols) == 0 {
		cols = []PrinterColumn{{Name: "Age", Type: "date", Description: recordedColumns["/configmaps"][2].Description, JSONPath: ".metadata.creationTimestamp"}}
	}
	p := Printer{Columns: []Column{recordedColumns[""][0]}}
	paths := make([]string, len(cols))
	for i, c := range cols {
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		p.Columns = append(p.Columns, Column{Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority})
		paths[i] = gjsonPath(c.JSONPath)
	}
	p.Cells = func(o gjson.Result, now time.Time) []any {
		cells := []any{name(o)}
		for i, c := range cols {
			cells = append(cells, customCell(c.Type, o.Get(paths[i]), now))
		}
		return cells
	}
	return p
}

// gjsonPath turns a simple JSONPath (".spec.replicas",
// ".metadata.labels.app\.kubernetes\.io/name", ".status.conditions[0].type")
// into a gjson path.
func gjsonPath(jp string) string {
	jp = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(jp, "{"), "}"), ".")
	var b strings.Builder
	for i := 0; i < len(jp); i++ {
		switch c := jp[i]; c {
		case '\\':
			if i+1 < len(jp) {
				i++
				b.WriteByte('\\')
				b.WriteByte(jp[i])
			}
		case '[':
			end := strings.IndexByte(jp[i:], ']')
			if end < 0 {
				return b.String()
			}
			b.WriteByte('.')
			b.WriteString(strings.Trim(jp[i+1:i+end], `'"`))
			i += end
		case '*', '?', '|', '#', '@':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func customCell(typ string, v gjson.Result, now time.Time) any {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	switch typ {
	case "integer":
		if v.Type == gjson.Number {
			return v.Int()
		}
	case "number":
		if v.Type == gjson.Number {
			return v.Float()
		}
	case "boolean":
		if v.IsBool() {
			return v.Bool()
		}
	case "date":
		if v.Type == gjson.String {
			t, err := time.Parse(time.RFC3339, v.Str)
			if err != nil {
				return "<invalid>"
			}
			return Age(t, now)
		}
	case "string":
		if v.Type == gjson.String {
			return v.Str
		}
		return v.Raw
	}
	return nil
}

func name(o gjson.Result) string { return o.Get("metadata.name").String() }

func count(o gjson.Result, field string) int {
	n := 0
	o.Get(field).ForEach(func(_, _ gjson.Result) bool { n++; return true })
	return n
}

func phase(o gjson.Result, def string) string {
	if p := o.Get("status.phase"); p.Exists() {
		return p.String()
	}
	return def
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// podCells are kubectl's pod columns: NAME, READY, STATUS, RESTARTS, AGE,
// IP, NODE, NOMINATED NODE, READINESS GATES.
func podCells(o gjson.Result, now time.Time) []any {
	statuses := o.Get("status.containerStatuses").Array()
	reason, ready := podStatus(o, statuses)
	return []any{name(o), fmt.Sprintf("%d/%d", ready, len(o.Get("spec.containers").Array())), reason,
		podRestarts(statuses, now), age(o, now),
		orNone(o.Get("status.podIPs.0.ip").String()), orNone(o.Get("spec.nodeName").String()),
		orNone(o.Get("status.nominatedNodeName").String()), readinessGates(o)}
}

// podStatus is a pod's STATUS column, and how many of its containers are
// ready, worked out as kubectl does: the phase or the pod's reason, then
// what the containers say, the first one listed last, then a completed
// pod's truer state, then its deletion.
func podStatus(o gjson.Result, statuses []gjson.Result) (reason string, ready int) {
	ph := phase(o, "Pending")
	reason = ph
	if r := o.Get("status.reason").String(); r != "" {
		reason = r
	}
	for _, c := range o.Get("status.conditions").Array() {
		if c.Get("type").String() == "PodScheduled" && c.Get("reason").String() == "SchedulingGated" {
			reason = "SchedulingGated"
		}
	}
	hasRunning := false
	errorReason := ""
	for i := len(statuses) - 1; i >= 0; i-- {
		c := statuses[i]
		switch {
		case c.Get("state.waiting.reason").String() != "":
			reason = c.Get("state.waiting.reason").String()
		case c.Get("state.terminated").Exists():
			t := c.Get("state.terminated")
			reason = terminatedReason(t)
			if t.Get("exitCode").Int() != 0 {
				errorReason = reason
			}
		case c.Get("ready").Bool() && c.Get("state.running").Exists():
			hasRunning = true
			ready++
		}
	}
	if reason == "Completed" {
		switch {
		case hasRunning && podReady(o):
			reason = "Running"
		case errorReason != "":
			reason = errorReason
		case hasRunning:
			reason = "NotReady"
		}
	}
	if o.Get("metadata.deletionTimestamp").Exists() {
		switch {
		case o.Get("status.reason").String() == "NodeLost":
			reason = "Unknown"
		case ph != "Succeeded" && ph != "Failed":
			reason = "Terminating"
		}
	}
	return reason, ready
}

// terminatedReason says why a container terminated: its reason, else the
// signal, else the exit code.
func terminatedReason(t gjson.Result) string {
	switch {
	case t.Get("reason").String() != "":
		return t.Get("reason").String()
	case t.Get("signal").Int() != 0:
		return fmt.Sprintf("Signal:%d", t.Get("signal").Int())
	default:
		return fmt.Sprintf("ExitCode:%d", t.Get("exitCode").Int())
	}
}

// podRestarts is the RESTARTS column: the containers' restarts, and how
// long ago the last of them ended.
func podRestarts(statuses []gjson.Result, now time.Time) string {
	restarts := 0
	var lastRestart time.Time
	for _, c := range statuses {
		restarts += int(c.Get("restartCount").Int())
		if t := timeAt(c.Get("lastState.terminated.finishedAt")); t.After(lastRestart) {
			lastRestart = t
		}
	}
	if restarts != 0 && !lastRestart.IsZero() {
		return fmt.Sprintf("%d (%s ago)", restarts, Age(lastRestart, now))
	}
	return strconv.Itoa(restarts)
}

// readinessGates is the READINESS GATES column: of the pod's gates, how
// many its conditions meet.
func readinessGates(o gjson.Result) string {
	gs := o.Get("spec.readinessGates").Array()
	if len(gs) == 0 {
		return "<none>"
	}
	met := 0
	for _, g := range gs {
		for _, c := range o.Get("status.conditions").Array() {
			if c.Get("type").String() == g.Get("conditionType").String() && c.Get("status").String() == "True" {
				met++
			}
		}
	}
	return fmt.Sprintf("%d/%d", met, len(gs))
}

func podReady(o gjson.Result) bool {
	for _, c := range o.Get("status.conditions").Array() {
		if c.Get("type").String() == "Ready" && c.Get("status").String() == "True" {
			return true
		}
	}
	return false
}

func containerCells(cs []gjson.Result) (names, images string) {
	var n, i []string
	for _, c := range cs {
		n = append(n, c.Get("name").String())
		i = append(i, c.Get("image").String())
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func deploymentCells(o gjson.Result, now time.Time) []any {
	desired := int64(1) // the default the real server fills in
	if r := o.Get("spec.replicas"); r.Exists() {
		desired = r.Int()
	}
	names, images := containerCells(o.Get("spec.template.spec.containers").Array())
	return []any{name(o), fmt.Sprintf("%d/%d", o.Get("status.readyReplicas").Int(), desired),
		o.Get("status.updatedReplicas").Int(), o.Get("status.availableReplicas").Int(), age(o, now),
		names, images, labelSelectorString(o.Get("spec.selector"))}
}

// labelSelectorString prints a LabelSelector as labels.Selector's String
// does: requirements sorted by key, comma separated.
func labelSelectorString(sel gjson.Result) string {
	if !sel.Exists() {
		return ""
	}
	type req struct{ key, text string }
	var reqs []req
	sel.Get("matchLabels").ForEach(func(k, v gjson.Result) bool {
		reqs = append(reqs, req{k.String(), k.String() + "=" + v.String()})
		return true
	})
	for _, e := range sel.Get("matchExpressions").Array() {
		k := e.Get("key").String()
		var vals []string
		for _, v := range e.Get("values").Array() {
			vals = append(vals, v.String())
		}
		slices.Sort(vals)
		switch e.Get("operator").String() {
		case "In":
			reqs = append(reqs, req{k, k + " in (" + strings.Join(vals, ",") + ")"})
		case "NotIn":
			reqs = append(reqs, req{k, k + " notin (" + strings.Join(vals, ",") + ")"})
		case "Exists":
			reqs = append(reqs, req{k, k})
		case "DoesNotExist":
			reqs = append(reqs, req{k, "!" + k})
		}
	}
	slices.SortStableFunc(reqs, func(a, b req) int { return strings.Compare(a.key, b.key) })
	texts := make([]string, len(reqs))
	for i, r := range reqs {
		texts[i] = r.text
	}
	return strings.Join(texts, ",")
}

func serviceCells(o gjson.Result, now time.Time) []any {
	typ := o.Get("spec.type").String()
	if typ == "" {
		typ = "ClusterIP"
	}
	clusterIP := orNone(o.Get("spec.clusterIPs.0").String())
	var ext []string
	for _, ip := range o.Get("spec.externalIPs").Array() {
		ext = append(ext, ip.String())
	}
	external := "<unknown>"
	switch typ {
	case "ClusterIP", "NodePort":
		external = orNone(strings.Join(ext, ","))
	case "LoadBalancer":
		var lb []string
		for _, in := range o.Get("status.loadBalancer.ingress").Array() {
			if ip := in.Get("ip").String(); ip != "" {
				lb = append(lb, ip)
			} else if h := in.Get("hostname").String(); h != "" {
				lb = append(lb, h)
			}
		}
		all := append(lb, ext...)
		external = strings.Join(all, ",")
		if external == "" {
			external = "<pending>"
		}
	case "ExternalName":
		external = o.Get("spec.externalName").String()
	}
	var ports []string
	for _, p := range o.Get("spec.ports").Array() {
		proto := p.Get("protocol").String()
		if proto == "" {
			proto = "TCP"
		}
		s := fmt.Sprintf("%d/%s", p.Get("port").Int(), proto)
		if np := p.Get("nodePort").Int(); np > 0 {
			s = fmt.Sprintf("%d:%d/%s", p.Get("port").Int(), np, proto)
		}
		ports = append(ports, s)
	}
	var sel []string
	o.Get("spec.selector").ForEach(func(k, v gjson.Result) bool {
		sel = append(sel, k.String()+"="+v.String())
		return true
	})
	slices.Sort(sel)
	return []any{name(o), typ, clusterIP, external, orNone(strings.Join(ports, ",")), age(o, now), orNone(strings.Join(sel, ","))}
}

func nodeCells(o gjson.Result, now time.Time) []any {
	var status []string
	for _, c := range o.Get("status.conditions").Array() {
		if c.Get("type").String() == "Ready" {
			if c.Get("status").String() == "True" {
				status = append(status, "Ready")
			} else {
				status = append(status, "NotReady")
			}
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if o.Get("spec.unschedulable").Bool() {
		status = append(status, "SchedulingDisabled")
	}
	var roles []string
	o.Get("metadata.labels").ForEach(func(k, v gjson.Result) bool {
		switch key := k.String(); {
		case strings.HasPrefix(key, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(key, "node-role.kubernetes.io/"); r != "" {
				roles = append(roles, r)
			}
		case key == "kubernetes.io/role" && v.String() != "":
			roles = append(roles, v.String())
		}
		return true
	})
	slices.Sort(roles)
	roles = slices.Compact(roles)
	info := o.Get("status.nodeInfo")
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	kernel := unknown(info.Get("kernelVersion").String())
	if a := info.Get("architecture").String(); a != "" {
		kernel += " (" + a + ")"
	}
	address := func(typ string) string {
		for _, a := range o.Get("status.addresses").Array() {
			if a.Get("type").String() == typ {
				return a.Get("address").String()
			}
		}
		return "<none>"
	}
	return []any{name(o), strings.Join(status, ","), orNone(strings.Join(roles, ",")), age(o, now),
		info.Get("kubeletVersion").String(), address("InternalIP"), address("ExternalIP"),
		unknown(info.Get("osImage").String()), kernel, unknown(info.Get("containerRuntimeVersion").String())}
}

// eventCells prints a core/v1 Event, or an events.k8s.io/v1 one read as
// the core one it converts to.
func eventCells(o gjson.Result, now time.Time) []any {
	pick := func(paths ...string) gjson.Result {
		for _, p := range paths {
			if r := o.Get(p); r.Exists() && r.String() != "" {
				return r
			}
		}
		return gjson.Result{}
	}
	first := Age(timeAt(pick("firstTimestamp", "deprecatedFirstTimestamp")), now)
	if !pick("firstTimestamp", "deprecatedFirstTimestamp").Exists() {
		first = Age(timeAt(o.Get("eventTime")), now)
	}
	last := Age(timeAt(pick("lastTimestamp", "deprecatedLastTimestamp")), now)
	if !pick("lastTimestamp", "deprecatedLastTimestamp").Exists() {
		last = first
	}
	n := pick("count", "deprecatedCount").Int()
	if s := o.Get("series"); s.Exists() {
		last = Age(timeAt(s.Get("lastObservedTime")), now)
		n = s.Get("count").Int()
	} else if n == 0 {
		n = 1
	}
	involved := pick("involvedObject", "regarding")
	target := strings.ToLower(involved.Get("kind").String())
	if nm := involved.Get("name").String(); nm != "" {
		target += "/" + nm
	}
	component := pick("source.component", "deprecatedSource.component", "reportingController", "reportingComponent").String()
	host := pick("source.host", "deprecatedSource.host", "reportingInstance").String()
	source := component
	if host != "" {
		source = component + ", " + host
	}
	return []any{last, o.Get("type").String(), o.Get("reason").String(), target,
		involved.Get("fieldPath").String(), source, strings.TrimSpace(pick("message", "note").String()),
		first, n, name(o)}
}
