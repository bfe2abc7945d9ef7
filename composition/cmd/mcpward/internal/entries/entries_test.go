package entries

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestParseArgs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want map[string]string
		bad  bool
	}{
		{in: "", want: nil},
		{in: "  ", want: nil},
		{in: `{"a":"b","c":""}`, want: map[string]string{"a": "b", "c": ""}},
		{in: `{"a":1}`, bad: true},
		{in: `["a"]`, bad: true},
		{in: `null`, bad: true},
		{in: `{`, bad: true},
	} {
		got, err := ParseArgs(tt.in)
		if tt.bad {
			assert.True(t, cmdutil.IsUsage(err), "%q: %v", tt.in, err)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

func TestCompleteArgs(t *testing.T) {
	v, ctx := CompleteArgs(map[string]string{"a": "x", "b": "y"}, "a")
	assert.Equal(t, "x", v)
	assert.Equal(t, map[string]string{"b": "y"}, ctx)
	v, ctx = CompleteArgs(nil, "a")
	assert.Empty(t, v)
	assert.Nil(t, ctx)
}

func TestWritePromptResult(t *testing.T) {
	var b bytes.Buffer
	WritePromptResult(&b, ports.PromptResult{Messages: []ports.PromptMessage{
		{Role: "user", Content: json.RawMessage(`{"type":"text","text":"line1\nmcpward: fake\u001b[2J"}`)},
		{Role: "assistant\u001b]0;x\u0007", Content: json.RawMessage(`{"type":"image","data":"AA=="}`)},
		{Role: "user", Content: json.RawMessage(`{"type":"resource","resource":{"uri":"a://b","text":"embedded"}}`)},
		{Role: "user", Content: json.RawMessage(`[`)},
	}})
	assert.Equal(t, "[user]\n  line1\n  mcpward: fake\\x1b[2J\n  [assistant\\x1b]0;x\\x07]\n  [image content]\n  [user]\n  [resource a://b]\n  embedded\n  [user]\n  [unreadable content]\n", b.String())
}

func TestWriteReadResult(t *testing.T) {
	var b bytes.Buffer
	WriteReadResult(&b, ports.ReadResult{Contents: []ports.ResourceContents{
		{Text: "a\rb\n\nc"},
		{IsBlob: true, Blob: []byte{1, 2, 3}, MIMEType: "image/png"},
	}})
	assert.Equal(t, "a\\rb\n\n  c\n  [blob 3 bytes, image/png]\n", b.String())

	j := ToReadResult("s", "u", ports.ReadResult{Contents: []ports.ResourceContents{{Text: ""}, {IsBlob: true}}})
	out, err := json.Marshal(j)
	require.NoError(t, err)
	assert.JSONEq(t, `{"server":"s","uri":"u","truncated":false,"contents":[{"uri":"","mime_type":"","text":""},{"uri":"","mime_type":"","blob":""}]}`, string(out))
}

func TestServerErr(t *testing.T) {
	assert.NoError(t, ServerErr(composition.ServerStatus{Name: "a", State: composition.StateConnected}))
	err := ServerErr(composition.ServerStatus{Name: "a", State: composition.StateFailed, Class: refusal.Transient, Reason: "connect_timeout"})
	assert.Equal(t, "connect_timeout", refusal.ReasonOf(err))
	err = ServerErr(composition.ServerStatus{Name: "a", State: composition.StateUnknown})
	assert.Equal(t, composition.ReasonUnknownServer, refusal.ReasonOf(err))
	err = ServerErr(composition.ServerStatus{Name: "a", State: composition.StateDenied, Reason: "approval_required"})
	assert.Equal(t, refusal.Refused, refusal.ClassOf(err))
}
