package kubeconfig

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// The parser walks a yaml.Node tree, where an alias is a pointer to its
// anchor: walking it expands the anchor again at every use, and aliases of
// aliases multiply. yaml's decoder bounds that expansion ("excessive
// aliasing") but is not used to build the tree, so checkAliasing applies
// the same budget to the whole document before it is walked.
//
// The budget is a share of the nodes the expanded document would have
// that may come from aliases: nearly all of it for a small document, a
// tenth of it past four million nodes, sliding in between.
const (
	aliasRatioLow  = 400_000
	aliasRatioHigh = 4_000_000
	// maxExpanded saturates the count, so nested aliases cannot overflow it.
	maxExpanded = 1 << 40
)

func allowedAliasShare(expanded int64) float64 {
	switch {
	case expanded <= aliasRatioLow:
		return 0.99
	case expanded >= aliasRatioHigh:
		return 0.10
	}
	return 0.99 - 0.89*float64(expanded-aliasRatioLow)/float64(aliasRatioHigh-aliasRatioLow)
}

// checkAliasing fails when expanding doc's aliases would take more than the
// budget, or when an anchor contains an alias of itself.
func checkAliasing(doc *yaml.Node) error {
	c := aliasCounter{size: map[*yaml.Node]int64{}, open: map[*yaml.Node]bool{}}
	expanded, err := c.count(doc)
	if err != nil {
		return err
	}
	fromAliases := expanded - c.nodes
	if fromAliases > 100 && expanded > 1000 && float64(fromAliases)/float64(expanded) > allowedAliasShare(expanded) {
		return fmt.Errorf("excessive aliasing: its %d YAML nodes expand through aliases to %s; yaml's decoder and kubectl refuse it too", c.nodes, expandedText(expanded))
	}
	return nil
}

func expandedText(n int64) string {
	if n >= maxExpanded {
		return fmt.Sprintf("more than %d", int64(maxExpanded))
	}
	return fmt.Sprint(n)
}

// aliasCounter counts the nodes of a tree as written (nodes) and as
// expanded (count's result), remembering each anchor's expanded size so
// the count itself never expands anything.
type aliasCounter struct {
	nodes int64
	size  map[*yaml.Node]int64 // expanded size of a node already counted
	open  map[*yaml.Node]bool  // nodes being counted, to find cycles
}

func (c *aliasCounter) count(n *yaml.Node) (int64, error) {
	if n == nil {
		return 0, nil
	}
	if s, ok := c.size[n]; ok {
		return s, nil
	}
	if c.open[n] {
		return 0, fmt.Errorf("anchor %q (line %d) contains an alias of itself", n.Anchor, n.Line)
	}
	c.open[n] = true
	defer delete(c.open, n)
	c.nodes++
	total := int64(1)
	children := n.Content
	if n.Kind == yaml.AliasNode {
		children = []*yaml.Node{n.Alias}
	}
	for _, child := range children {
		s, err := c.count(child)
		if err != nil {
			return 0, err
		}
		total = min(total+s, maxExpanded)
	}
	c.size[n] = total
	return total, nil
}
