package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"

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
		{"C1 OSC and NEL", "a\u009d52;c;x\u0085b", `a\u009d52;c;x\u0085b`, `a\u009d52;c;x\u0085b`},
		{"bidi override", "safe\u202eexe.txt", `safe\u202eexe.txt`, `safe\u202eexe.txt`},
		{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`, `\u2066a\u2067b\u2068c\u2069`},
		{"bidi embeddings", "\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`, `\u202a\u202b\u202c\u202d`},
		{"marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`, `\u200e\u200f\u061c`},
		{"zero width", "a\u200bb\u200cc\u200dd\u2060e\ufeff", `a\u200bb\u200cc\u200dd\u2060e\ufeff`, `a\u200bb\u200cc\u200dd\u2060e\ufeff`},
		{"soft hyphen", "pay\u00adpal", `pay\u00adpal`, `pay\u00adpal`},
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
			assert.Equal(t, tt.in == tt.line, Safe(tt.in, false))
			assert.Equal(t, tt.in == tt.text, Safe(tt.in, true))
		})
	}
}

func TestUnsafe(t *testing.T) {
	for _, r := range []rune{0, 0x1b, 0x7f, 0x80, 0x9b, 0x9d, 0x9f, 0xad, 0x061c, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e,
		0x2060, 0x2066, 0x2069, 0xfeff, 0x2028, 0x2029, 0xe0001} {
		assert.True(t, Unsafe(r), "%U", r)
	}
	for _, r := range []rune{' ', 'a', '~', 0xa0, 0xe9, 0x263a, 0x1f44d, 0xfffd} {
		assert.False(t, Unsafe(r), "%U", r)
	}
}

func TestClip(t *testing.T) {
	assert.Equal(t, "short", Clip("short", 100))
	long := strings.Repeat("a", 200*1024)
	got := Clip(long, 8<<10)
	assert.LessOrEqual(t, len(got), 8<<10)
	assert.True(t, strings.HasSuffix(got, "…[cut by mcpward: 204800 bytes in all]"), got[len(got)-60:])
	assert.True(t, strings.HasPrefix(got, strings.Repeat("a", 8000)))
	// Fit names the length as given, not escaped.
	evil := strings.Repeat("\u202e", 5000)
	got = Fit(evil, 1000, true)
	assert.LessOrEqual(t, len(got), 1000)
	assert.True(t, strings.HasSuffix(got, "…[cut by mcpward: 15000 bytes in all]"), got)
	assert.True(t, strings.HasPrefix(got, `\u202e\u202e`))
	assert.Equal(t, "a\nb", Fit("a\nb", 100, true))
	assert.Equal(t, `a\nb`, Fit("a\nb", 100, false))
	// Never a broken character, whatever the limit.
	s := strings.Repeat("日本語👍", 50)
	for limit := 0; limit < len(s)+2; limit++ {
		c := Clip(s, limit)
		assert.True(t, utf8.ValidString(c), "limit %d", limit)
		assert.LessOrEqual(t, len(c), max(limit, MinClip), "limit %d", limit)
	}
}

// FuzzEscape: whatever the input, Line's output holds no byte below 0x20,
// Text's none but "\n"; neither holds DEL, a C1 control, a bidi, format or
// zero-width rune; both are valid UTF-8; Text keeps the line count; safe
// input is unchanged; a clip of either stays safe, valid and within its
// limit.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb\r\nmcpward: x", "\x1b]52;c;eA==\x07", "\u202e\u2066\u200b\ufeff", "\xff\xfe", "\u009b1m", "\U000e0041",
		strings.Repeat("\u202e", 40)} {
		f.Add(s, 100)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		for _, keepNL := range []bool{false, true} {
			out := escape(s, keepNL)
			check := func(out string) {
				if !utf8.ValidString(out) {
					t.Fatalf("not UTF-8: %q", out)
				}
				for _, r := range out {
					if r == '\n' && keepNL {
						continue
					}
					if Unsafe(r) {
						t.Fatalf("unsafe rune %U in %q", r, out)
					}
				}
				for i := 0; i < len(out); i++ {
					if c := out[i]; c < 0x20 && !(keepNL && c == '\n') || c == 0x7f {
						t.Fatalf("byte %#x in %q", c, out)
					}
				}
			}
			check(out)
			if keepNL && strings.Count(out, "\n") != strings.Count(s, "\n") {
				t.Fatalf("Text changed the line count of %q", s)
			}
			if clean(s, keepNL) && out != s {
				t.Fatalf("safe %q changed to %q", s, out)
			}
			if !Safe(out, keepNL) {
				t.Fatalf("the escape of %q is not Safe: %q", s, out)
			}
			for _, c := range []string{Clip(out, limit%(1<<20)), Fit(s, limit%(1<<20), keepNL)} {
				check(c)
				if len(c) > max(limit%(1<<20), MinClip) {
					t.Fatalf("clip of %d bytes over its limit %d", len(c), limit)
				}
			}
		}
	})
}
