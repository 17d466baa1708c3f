//go:build !amd64 || purego

package raw

// classify returns, for the 64 bytes at p, a mask with bit k set when byte k
// is a quote, one for backslashes, one for '{' or '[' and one for '}' or
// ']'.
func classify(p *[64]byte) (quote, backslash, open, close uint64) {
	return classifyWords(p)
}

// classifyJSON returns, for the 64 bytes at p, masks of the quotes, the
// backslashes, the opening and the closing brackets, the separators (':'
// and ','), the spaces and the control bytes (below 0x20), and quoted,
// prefixXOR of the quotes.
func classifyJSON(p *[64]byte) (quote, backslash, open, close, separator, space, control, quoted uint64) {
	quote, backslash, open, close, separator, space, control = classifyJSONWords(p)
	return quote, backslash, open, close, separator, space, control, prefixXOR(quote)
}

// plainRun counts the bytes of p before the first quote, backslash or
// control byte, or, with none, about all of them (see plainRunWords).
func plainRun(p []byte) int { return plainRunWords(p) }
