package jsonout

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
)

func TestWrite(t *testing.T) {
	v := map[string]any{
		"bidi":    "safe\u202eexe.txt",
		"zw":      "a\u200bb\ufeff",
		"sep":     "a\u2028b\u2029c",
		"c1":      "a\u009b31m",
		"ctl":     "\x1b]0;x\x07\r\n",
		"del":     "a\x7f",
		"tag":     "\U000e0041",
		"plain":   "café ☕ <b>",
		"content": json.RawMessage(`[{"type":"text","text":"x` + "\u202e" + `y"}]`),
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, v))
	out := buf.String()
	assert.Contains(t, out, `"safe\u202eexe.txt"`)
	assert.Contains(t, out, `"a\u200bb\ufeff"`)
	assert.Contains(t, out, `"a\u2028b\u2029c"`)
	assert.Contains(t, out, `"a\u009b31m"`)
	assert.Contains(t, out, `"\u001b]0;x\u0007\r\n"`)
	assert.Contains(t, out, `"a\u007f"`)
	assert.Contains(t, out, `"\udb40\udc41"`)
	assert.Contains(t, out, `"café ☕ \u003cb\u003e"`)
	assert.Contains(t, out, `x\u202ey`)
	for _, r := range out {
		assert.False(t, r != '\n' && termsafe.Unsafe(r), "unsafe %U", r)
	}
	// Exact: it decodes to the same values.
	var got map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	for k, want := range v {
		if k == "content" {
			continue
		}
		assert.Equal(t, want, got[k], k)
	}
	assert.Equal(t, "x\u202ey", got["content"].([]any)[0].(map[string]any)["text"])
}

func TestEscapeInvalidUTF8(t *testing.T) {
	out := Escape([]byte("[\"a\xffb\"]"))
	assert.Equal(t, `["a\ufffdb"]`, string(out))
	clean := []byte(`{"a": "b"}`)
	assert.Equal(t, clean, Escape(clean))
}

// FuzzEscape: any string encoded and escaped is valid UTF-8 JSON holding
// no unsafe rune, and decodes to what encoding/json makes of the string.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a", "\u202e", "\xff", "\U000e0041\u2028", "\x1b[2J"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, s))
		out := buf.Bytes()
		require.True(t, utf8.Valid(out))
		for _, r := range string(out) {
			if r != '\n' && termsafe.Unsafe(r) {
				t.Fatalf("unsafe %U in %q", r, out)
			}
		}
		plain, err := json.Marshal(s)
		require.NoError(t, err)
		var want, got string
		require.NoError(t, json.Unmarshal(plain, &want))
		require.NoError(t, json.Unmarshal(out, &got))
		require.Equal(t, want, got)
	})
}
