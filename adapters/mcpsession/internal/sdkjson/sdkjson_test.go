package sdkjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMarshal holds Marshal to the SDK's encoding: HTML characters of the
// value's own strings unescaped (encoding/json's default escapes them),
// no trailing newline, and what a type's own MarshalJSON wrote kept as it
// wrote it (compacted).
func TestMarshal(t *testing.T) {
	got, err := Marshal(map[string]any{"k": "<a>&</a>", "n": 1})
	require.NoError(t, err)
	assert.Equal(t, `{"k":"<a>&</a>","n":1}`, string(got))

	std, err := json.Marshal(map[string]any{"k": "<a>&</a>"})
	require.NoError(t, err)
	assert.Contains(t, string(std), `\u003c`, "encoding/json's default, which Marshal must not be")

	got, err = Marshal(json.RawMessage(`{ "a" : "\u003c" }`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":"\u003c"}`, string(got))

	_, err = Marshal(func() {})
	assert.Error(t, err)
}

// TestTooDeep pins the SDK decoder's count: brackets inside strings (and
// after an escaped quote) do not count, closers never go below 0, and
// exactly MaxDepth levels pass.
func TestTooDeep(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	assert.False(t, TooDeep(nest(MaxDepth)))
	assert.True(t, TooDeep(nest(MaxDepth+1)))
	assert.True(t, TooDeep([]byte(strings.Repeat(`{"a":`, MaxDepth+1))), "unclosed counts as it opens")
	assert.False(t, TooDeep([]byte(`"`+strings.Repeat("[", 2*MaxDepth)+`"`)))
	assert.False(t, TooDeep([]byte(`"\"`+strings.Repeat("{", 2*MaxDepth)+`"`)))
	assert.False(t, TooDeep(append([]byte(strings.Repeat("]", 5*MaxDepth)), nest(MaxDepth)...)))
}
