//go:build !purego

#include "textflag.h"

// SPLAT fills the 16 bytes of X with the byte c.
#define SPLAT(c, X) \
	MOVQ $(c*0x0101010101010101), AX \
	MOVQ AX, X \
	PUNPCKLQDQ X, X

// CHUNK classifies the 16 bytes at off(SI): PCMPEQB leaves 0xff in each
// matching byte and PMOVMSKB gathers their top bits into 16 bits, which go
// to bits off..off+15 of the four masks. OR with 0x20 folds '[' onto '{' and
// ']' onto '}'; no other byte becomes either.
#define CHUNK(off) \
	MOVOU off(SI), X0 \
	MOVO X0, X1 \
	PCMPEQB X8, X1 \
	PMOVMSKB X1, AX \
	SHLQ $off, AX \
	ORQ AX, R8 \
	MOVO X0, X2 \
	PCMPEQB X9, X2 \
	PMOVMSKB X2, BX \
	SHLQ $off, BX \
	ORQ BX, R9 \
	POR X10, X0 \
	MOVO X0, X3 \
	PCMPEQB X11, X3 \
	PMOVMSKB X3, CX \
	SHLQ $off, CX \
	ORQ CX, R10 \
	PCMPEQB X12, X0 \
	PMOVMSKB X0, DX \
	SHLQ $off, DX \
	ORQ DX, R11

// func classify(p *[64]byte) (quote, backslash, open, close uint64)
TEXT ·classify(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), SI
	SPLAT(0x22, X8)  // '"'
	SPLAT(0x5c, X9)  // '\\'
	SPLAT(0x20, X10) // the fold
	SPLAT(0x7b, X11) // '{'
	SPLAT(0x7d, X12) // '}'
	XORQ R8, R8
	XORQ R9, R9
	XORQ R10, R10
	XORQ R11, R11
	CHUNK(0)
	CHUNK(16)
	CHUNK(32)
	CHUNK(48)
	MOVQ R8, quote+8(FP)
	MOVQ R9, backslash+16(FP)
	MOVQ R10, open+24(FP)
	MOVQ R11, close+32(FP)
	RET

// TOKENS classifies the 16 bytes at off(SI) for classifyJSON: quotes to
// R8, backslashes to R9, '{' and '[' to R10, '}' and ']' to DI, colons
// and commas to R13, spaces to R11 and control bytes (below 0x20, by
// min(x, 0x1f) == x) to R12.
#define TOKENS(off) \
	MOVOU off(SI), X0 \
	MOVO X0, X1 \
	PCMPEQB X8, X1 \
	PMOVMSKB X1, AX \
	SHLQ $off, AX \
	ORQ AX, R8 \
	MOVO X0, X2 \
	PCMPEQB X9, X2 \
	PMOVMSKB X2, BX \
	SHLQ $off, BX \
	ORQ BX, R9 \
	MOVO X0, X3 \
	PCMPEQB X10, X3 \
	PMOVMSKB X3, CX \
	SHLQ $off, CX \
	ORQ CX, R11 \
	MOVO X0, X4 \
	PMINUB X14, X4 \
	PCMPEQB X0, X4 \
	PMOVMSKB X4, DX \
	SHLQ $off, DX \
	ORQ DX, R12 \
	MOVO X0, X5 \
	PCMPEQB X13, X5 \
	MOVO X0, X6 \
	PCMPEQB X7, X6 \
	POR X6, X5 \
	PMOVMSKB X5, AX \
	SHLQ $off, AX \
	ORQ AX, R13 \
	POR X10, X0 \
	MOVO X0, X6 \
	PCMPEQB X11, X6 \
	PMOVMSKB X6, CX \
	SHLQ $off, CX \
	ORQ CX, R10 \
	PCMPEQB X12, X0 \
	PMOVMSKB X0, BX \
	SHLQ $off, BX \
	ORQ BX, DI

// jsonBytes holds the bytes classifyJSON compares with, 16 of each, so
// that each is one load rather than three instructions per call.
DATA jsonBytes<>+0x00(SB)/8, $0x2c2c2c2c2c2c2c2c // ','
DATA jsonBytes<>+0x08(SB)/8, $0x2c2c2c2c2c2c2c2c
DATA jsonBytes<>+0x10(SB)/8, $0x2222222222222222 // '"'
DATA jsonBytes<>+0x18(SB)/8, $0x2222222222222222
DATA jsonBytes<>+0x20(SB)/8, $0x5c5c5c5c5c5c5c5c // '\\'
DATA jsonBytes<>+0x28(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA jsonBytes<>+0x30(SB)/8, $0x2020202020202020 // ' ', and the fold
DATA jsonBytes<>+0x38(SB)/8, $0x2020202020202020
DATA jsonBytes<>+0x40(SB)/8, $0x7b7b7b7b7b7b7b7b // '{'
DATA jsonBytes<>+0x48(SB)/8, $0x7b7b7b7b7b7b7b7b
DATA jsonBytes<>+0x50(SB)/8, $0x7d7d7d7d7d7d7d7d // '}'
DATA jsonBytes<>+0x58(SB)/8, $0x7d7d7d7d7d7d7d7d
DATA jsonBytes<>+0x60(SB)/8, $0x3a3a3a3a3a3a3a3a // ':'
DATA jsonBytes<>+0x68(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA jsonBytes<>+0x70(SB)/8, $0x1f1f1f1f1f1f1f1f // the last control byte
DATA jsonBytes<>+0x78(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL jsonBytes<>(SB), RODATA|NOPTR, $128

// TOKENS0 is TOKENS for the first 16 bytes, whose bits need no shift
// and start the masks.
#define TOKENS0 \
	MOVOU (SI), X0 \
	MOVO X0, X1 \
	PCMPEQB X8, X1 \
	PMOVMSKB X1, AX \
	MOVQ AX, R8 \
	MOVO X0, X2 \
	PCMPEQB X9, X2 \
	PMOVMSKB X2, BX \
	MOVQ BX, R9 \
	MOVO X0, X3 \
	PCMPEQB X10, X3 \
	PMOVMSKB X3, CX \
	MOVQ CX, R11 \
	MOVO X0, X4 \
	PMINUB X14, X4 \
	PCMPEQB X0, X4 \
	PMOVMSKB X4, DX \
	MOVQ DX, R12 \
	MOVO X0, X5 \
	PCMPEQB X13, X5 \
	MOVO X0, X6 \
	PCMPEQB X7, X6 \
	POR X6, X5 \
	PMOVMSKB X5, AX \
	MOVQ AX, R13 \
	POR X10, X0 \
	MOVO X0, X6 \
	PCMPEQB X11, X6 \
	PMOVMSKB X6, CX \
	MOVQ CX, R10 \
	PCMPEQB X12, X0 \
	PMOVMSKB X0, BX \
	MOVQ BX, DI

// func classifyJSON(p *[64]byte) (quote, backslash, open, close, separator, space, control, quoted uint64)
TEXT ·classifyJSON(SB), NOSPLIT, $0-72
	MOVQ p+0(FP), SI
	MOVOU jsonBytes<>+0x00(SB), X7
	MOVOU jsonBytes<>+0x10(SB), X8
	MOVOU jsonBytes<>+0x20(SB), X9
	MOVOU jsonBytes<>+0x30(SB), X10
	MOVOU jsonBytes<>+0x40(SB), X11
	MOVOU jsonBytes<>+0x50(SB), X12
	MOVOU jsonBytes<>+0x60(SB), X13
	MOVOU jsonBytes<>+0x70(SB), X14
	TOKENS0
	TOKENS(16)
	TOKENS(32)
	TOKENS(48)
	MOVQ R8, quote+8(FP)
	MOVQ R9, backslash+16(FP)
	MOVQ R10, open+24(FP)
	MOVQ DI, close+32(FP)
	MOVQ R13, separator+40(FP)
	MOVQ R11, space+48(FP)
	MOVQ R12, control+56(FP)
	// quoted: the prefix XOR of the quotes, a carry-less multiplication
	// by all ones where the CPU has PCLMULQDQ, else shifts.
	CMPB ·useCLMUL(SB), $0
	JEQ shifts
	MOVQ R8, X0
	PCMPEQB X1, X1
	PCLMULQDQ $0, X1, X0
	MOVQ X0, quoted+64(FP)
	RET
shifts:
	MOVQ R8, AX
	MOVQ AX, BX
	SHLQ $1, BX
	XORQ BX, AX
	MOVQ AX, BX
	SHLQ $2, BX
	XORQ BX, AX
	MOVQ AX, BX
	SHLQ $4, BX
	XORQ BX, AX
	MOVQ AX, BX
	SHLQ $8, BX
	XORQ BX, AX
	MOVQ AX, BX
	SHLQ $16, BX
	XORQ BX, AX
	MOVQ AX, BX
	SHLQ $32, BX
	XORQ BX, AX
	MOVQ AX, quoted+64(FP)
	RET

// func hasCLMUL() bool
//
// hasCLMUL reports CPUID leaf 1's ECX bit 1, PCLMULQDQ.
TEXT ·hasCLMUL(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	SHRL $1, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)
	RET

// func plainRun(p []byte) int
//
// plainRun counts the bytes of p, 16 at a time, before the first quote,
// backslash or control byte; with none, the bytes of p's whole 16-byte
// chunks.
TEXT ·plainRun(SB), NOSPLIT, $0-32
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	SPLAT(0x22, X8)  // '"'
	SPLAT(0x5c, X9)  // '\\'
	SPLAT(0x1f, X14) // the last control byte
	XORQ AX, AX
loop:
	LEAQ 16(AX), DX
	CMPQ DX, CX
	JHI done
	MOVOU (SI)(AX*1), X0
	MOVO X0, X1
	PCMPEQB X8, X1
	MOVO X0, X2
	PCMPEQB X9, X2
	POR X2, X1
	MOVO X0, X3
	PMINUB X14, X3
	PCMPEQB X0, X3
	POR X3, X1
	PMOVMSKB X1, BX
	TESTQ BX, BX
	JNZ found
	MOVQ DX, AX
	JMP loop
found:
	BSFQ BX, BX
	ADDQ BX, AX
done:
	MOVQ AX, ret+24(FP)
	RET
