//go:build !amd64 || purego

package raw

// classify returns, for the 64 bytes at p, a mask with bit k set when byte k
// is a quote, one for backslashes, one for '{' or '[' and one for '}' or
// ']'.
func classify(p *[64]byte) (quote, backslash, open, close uint64) {
	return classifyWords(p)
}

// classifyJSON fills m with the masks of the 64 bytes at p.
func classifyJSON(p *[64]byte, m *jsonMasks) {
	classifyJSONWords(p, m)
	m.quoted = prefixXOR(m.quote)
}

// plainRun counts the bytes of p before the first quote, backslash or
// control byte, or, with none, about all of them (see plainRunWords).
func plainRun(p []byte) int { return plainRunWords(p) }
