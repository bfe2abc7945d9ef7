package mcpsession

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sdkContent is the reference encoding of content: each item's own
// MarshalJSON, joined into an array.
func sdkContent(t testing.TB, content []mcp.Content) string {
	out := "["
	for i, c := range content {
		if i > 0 {
			out += ","
		}
		b, err := c.MarshalJSON()
		require.NoError(t, err)
		out += string(b)
	}
	return out + "]"
}

// TestMarshalContent checks marshalContent, whose plain-text items are
// written without the SDK, byte for byte against the SDK's own encoding.
func TestMarshalContent(t *testing.T) {
	texts := []string{
		"", "plain", `{"records":[{"id":1}]}`, "<script>&amp;</script>", "quote \" backslash \\",
		"\x00\x1f\x7f controls", "\b\f\n\r\t", "é😀名", "\u2028\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80",
	}
	for _, text := range texts {
		t.Run(text, func(t *testing.T) {
			for name, content := range map[string][]mcp.Content{
				"alone":       {&mcp.TextContent{Text: text}},
				"two":         {&mcp.TextContent{Text: text}, &mcp.TextContent{Text: text + "2"}},
				"with meta":   {&mcp.TextContent{Text: text, Meta: mcp.Meta{"k": "v"}}},
				"annotated":   {&mcp.TextContent{Text: text, Annotations: &mcp.Annotations{Priority: 0.5}}},
				"empty meta":  {&mcp.TextContent{Text: text, Meta: mcp.Meta{}}},
				"beside data": {&mcp.ImageContent{Data: []byte(text), MIMEType: "image/png"}, &mcp.TextContent{Text: text}},
			} {
				got, err := marshalContent(content)
				require.NoError(t, err, name)
				assert.Equal(t, sdkContent(t, content), string(got), name)
			}
		})
	}

	t.Run("empty", func(t *testing.T) {
		got, err := marshalContent(nil)
		require.NoError(t, err)
		assert.Equal(t, "[]", string(got))
	})
	t.Run("nil item", func(t *testing.T) {
		for _, content := range [][]mcp.Content{{nil}, {&mcp.TextContent{Text: "a"}, nil}, {(*mcp.TextContent)(nil)}} {
			_, err := marshalContent(content)
			assert.ErrorIs(t, err, errMalformed, "%v", content)
		}
	})
}

// FuzzMarshalContent checks the direct encoding of text items against the
// SDK's for any text, invalid UTF-8 included.
func FuzzMarshalContent(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\u2028", "\xff\xfe", "<&>", "\x7f\x00", "é😀"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, annotated bool) {
		item := &mcp.TextContent{Text: text}
		if annotated {
			item.Annotations = &mcp.Annotations{Priority: 1}
		}
		content := []mcp.Content{item, &mcp.TextContent{Text: text}}
		got, err := marshalContent(content)
		require.NoError(t, err)
		require.Equal(t, sdkContent(t, content), string(got))
	})
}

// TestJoinBackground checks the join of a context that cannot end: the
// call's context carries its values and ends when Close starts, and a
// context derived from it follows.
func TestJoinBackground(t *testing.T) {
	type key struct{}
	sctx, cancel := context.WithCancel(context.Background())
	s := &session{ctx: sctx}
	parent := context.WithValue(context.Background(), key{}, "v")
	c, stop := s.join(parent)
	defer stop()
	derived, cancelDerived := context.WithCancel(c)
	defer cancelDerived()

	assert.Equal(t, "v", c.Value(key{}))
	_, has := c.Deadline()
	assert.False(t, has)
	require.NoError(t, c.Err())
	select {
	case <-c.Done():
		t.Fatal("ended before Close")
	default:
	}

	cancel()
	<-c.Done()
	<-derived.Done()
	assert.ErrorIs(t, c.Err(), context.Canceled)
	assert.ErrorIs(t, derived.Err(), context.Canceled)
}
