//go:build !purego

package raw

// classify returns, for the 64 bytes at p, a mask with bit k set when byte k
// is a quote, one for backslashes, one for '{' or '[' and one for '}' or
// ']'. On amd64 it is a few SSE2 instructions per 16 bytes (SSE2 is part of
// every amd64 CPU); elsewhere, or with the purego build tag, classifyWords.
//
//go:noescape
func classify(p *[64]byte) (quote, backslash, open, close uint64)

// classifyJSON returns, for the 64 bytes at p, masks of the quotes, the
// backslashes, the opening and the closing brackets, the separators (':'
// and ','), the spaces and the control bytes (below 0x20), and quoted,
// prefixXOR of the quotes. On amd64 it is SSE2, as classify, and
// PCLMULQDQ where the CPU has it; elsewhere, or with the purego build tag,
// classifyJSONWords.
//
//go:noescape
func classifyJSON(p *[64]byte) (quote, backslash, open, close, separator, space, control, quoted uint64)

// useCLMUL is set when the CPU has PCLMULQDQ, which is not in amd64's
// baseline (GOAMD64=v1) though about every amd64 CPU has it; the module
// has no golang.org/x/sys/cpu, so it asks the CPU itself.
var useCLMUL = hasCLMUL()

func hasCLMUL() bool

// plainRun counts the bytes of p before the first quote, backslash or
// control byte, 16 at a time with SSE2: with none, the bytes of p's whole
// 16-byte chunks. Elsewhere, plainRunWords.
//
//go:noescape
func plainRun(p []byte) int
