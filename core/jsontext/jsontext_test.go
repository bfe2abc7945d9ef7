package jsontext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " backslash \`, "<>&", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
		"é😀名", "\u2028\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80 surrogate", "tail\xe2\x82",
	} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(AppendString(nil, s)), "%q", s)
		assert.Equal(t, noHTML(t, s), string(AppendStringNoHTML(nil, s)), "%q", s)
	}
	assert.Equal(t, `"<>&"`, string(AppendStringNoHTML(nil, "<>&")))
}

// noHTML is s as an encoding/json Encoder with HTML escaping off writes it.
func noHTML(t testing.TB, s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	require.NoError(t, e.Encode(s))
	return strings.TrimSuffix(b.String(), "\n")
}

// FuzzAppendString checks string escaping against encoding/json, with
// HTML escaping on and off, for any string, invalid UTF-8 included.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\u2028", "\xff\xfe", "<&>", "\x7f\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(AppendString(nil, s)))
		require.Equal(t, noHTML(t, s), string(AppendStringNoHTML(nil, s)))
	})
}
