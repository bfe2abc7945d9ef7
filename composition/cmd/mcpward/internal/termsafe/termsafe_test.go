package termsafe

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLineAndText(t *testing.T) {
	tests := []struct {
		name, in, line, text string
	}{
		{"plain ascii", "hello, world", "hello, world", "hello, world"},
		{"plain unicode", "café ☕ 日本語 👍", "café ☕ 日本語 👍", "café ☕ 日本語 👍"},
		{"newline", "a\nb", `a\nb`, "a\nb"},
		{"carriage return", "ok\r\nmcpward: fake", `ok\r\nmcpward: fake`, "ok\\r\nmcpward: fake"},
		{"tab", "a\tb", `a\tb`, `a\tb`},
		{"escape sequence: clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"OSC title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"OSC 52 clipboard", "\x1b]52;c;Y3VybCBldmlsfHNo\x1b\\", `\x1b]52;c;Y3VybCBldmlsfHNo\x1b\`, `\x1b]52;c;Y3VybCBldmlsfHNo\x1b\`},
		{"NUL and BEL", "a\x00b\x07", `a\x00b\x07`, `a\x00b\x07`},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1 CSI", "a\u009b31mred", `a\u009b31mred`, `a\u009b31mred`},
		{"C1 NEL", "a\u0085b", `a\u0085b`, `a\u0085b`},
		{"bidi override", "safe\u202eexe.txt", `safe\u202eexe.txt`, `safe\u202eexe.txt`},
		{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`, `\u2066a\u2067b\u2068c\u2069`},
		{"bidi embeddings", "\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`, `\u202a\u202b\u202c\u202d`},
		{"marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`, `\u200e\u200f\u061c`},
		{"zero width", "a\u200bb\u200cc\u200dd\u2060e\ufeff", `a\u200bb\u200cc\u200dd\u2060e\ufeff`, `a\u200bb\u200cc\u200dd\u2060e\ufeff`},
		{"line separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"tag characters", "a\U000e0041b", `a\U000e0041b`, `a\U000e0041b`},
		{"invalid utf-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"replacement character itself is text", "a\ufffdb", "a\ufffdb", "a\ufffdb"},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.line, Line(tt.in))
			assert.Equal(t, tt.text, Text(tt.in))
		})
	}
}

func TestUnsafe(t *testing.T) {
	for _, r := range []rune{0, 0x1b, 0x7f, 0x80, 0x9f, 0x061c, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e,
		0x2060, 0x2066, 0x2069, 0xfeff, 0x2028, 0x2029, 0xe0001} {
		assert.True(t, Unsafe(r), "%U", r)
	}
	for _, r := range []rune{' ', 'a', '~', 0xa0, 0xe9, 0x263a, 0x1f44d, 0xfffd} {
		assert.False(t, Unsafe(r), "%U", r)
	}
}

func TestTruncate(t *testing.T) {
	assert.Equal(t, "abc", Truncate("abc", 3))
	assert.Equal(t, "ab…", Truncate("abcd", 3))
	assert.Equal(t, "日…", Truncate("日本語", 2))
	assert.Equal(t, "", Truncate("abc", 0))
}
