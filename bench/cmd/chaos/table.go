package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// printTable writes one Markdown row per fault, one column per observer.
func printTable(w io.Writer, obs []*observer, rows []row, limit time.Duration) {
	head := []string{"fault", "what", "lasted", "changes (failed)"}
	for _, o := range obs {
		head = append(head, o.name)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, r := range rows {
		cells := []string{r.f.name, r.f.what, lasted(r), fmt.Sprintf("%d (%d)", r.changes, r.failing)}
		for i := range obs {
			cells = append(cells, cell(r, i, limit))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(w, "\nLists and watch-lists from each fault's start until the cache was equal again (relists):\n\n")
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(append([]string{"fault"}, head[4:]...), " | "), strings.Repeat("---|", len(head)-3))
	for _, r := range rows {
		cells := []string{r.f.name}
		for i := range obs {
			cells = append(cells, fmt.Sprint(r.relists[i]))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

func lasted(r row) string {
	if r.f.held {
		return "never ends"
	}
	return seconds(r.lasted)
}

// cell is the time to a converged cache from the end of the fault, and
// from its start where the fault asks for it.
func cell(r row, i int, limit time.Duration) string {
	if !r.converged[i] {
		return fmt.Sprintf("**never** (> %s)", seconds(limit))
	}
	switch {
	case r.f.held:
		return seconds(r.took[i]) + " from start"
	case r.f.fromStart:
		return fmt.Sprintf("%s (%s from start)", seconds(r.took[i]), seconds(r.fromStart[i]))
	}
	return seconds(r.took[i])
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
