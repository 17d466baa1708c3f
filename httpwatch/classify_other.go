//go:build !amd64 || purego

package httpwatch

// classify returns, for the 64 bytes at p, a mask with bit k set when byte k
// is a quote, one for backslashes, one for '{' or '[' and one for '}' or
// ']'.
func classify(p *[64]byte) (quote, backslash, open, close uint64) {
	return classifyWords(p)
}
