package call

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdtest"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/testserver"
)

// callText runs "call t TOOL --json" with extra flags and returns the
// text of the result's one item (the server's view of what the client
// answered), failing on any error.
func callText(t *testing.T, run *cmdtest.Run, tool string, flags ...string) string {
	t.Helper()
	err := cmdtest.Execute(run.F, NewCmdCall(run.F, nil), append([]string{"t", tool, "--json"}, flags...)...)
	require.NoError(t, err, "stderr: %s", run.ErrOut.String())
	var out struct {
		Content []struct{ Text string }
	}
	require.NoError(t, json.Unmarshal([]byte(run.Out.String()), &out), run.Out.String())
	require.Len(t, out.Content, 1)
	return out.Content[0].Text
}

// TestCallElicitation: --elicitation=defaults answers the server's form
// with its defaults (the sep1034 behaviour), decline declines, and
// without the flag off a terminal the capability is not declared (the
// server's request is refused as before).
func TestCallElicitation(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		flags []string
		want  string
	}{
		{"defaults", "ask", []string{"--elicitation=defaults"},
			`{"action":"accept","content":{"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}}`},
		{"decline", "ask", []string{"--elicitation", "decline"}, `{"action":"decline"}`},
		{"defaults declines a URL", "ask_url", []string{"--elicitation=defaults"}, `{"action":"decline"}`},
		{"nested form refused by name", "nested", []string{"--elicitation=defaults"},
			`{"error":{"code":-32602,"message":"mcpward refused the request: elicit_schema_nested","data":{"reason":"elicit_schema_nested"}}}`},
		{"not declared off a terminal", "ask", nil, `-32601`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := world(t, testserver.ModeElicit).Factory(t)
			got := callText(t, run, tt.tool, tt.flags...)
			if !strings.HasPrefix(tt.want, "{") {
				// Refused as method not found (the SDK words the message).
				var refused struct{ Error struct{ Code json.Number } }
				require.NoError(t, json.Unmarshal([]byte(got), &refused), got)
				assert.Equal(t, tt.want, refused.Error.Code.String())
				return
			}
			assert.JSONEq(t, tt.want, got)
			if strings.Contains(tt.want, "elicit_schema_nested") {
				assert.Contains(t, run.ErrOut.String(), `mcpward: refused a question from the server t: elicit_schema_nested (field "addr": nested object)`)
			}
		})
	}
}

// TestCallRoots: --roots offers the workspace root; without it roots/list
// is refused.
func TestCallRoots(t *testing.T) {
	w := world(t, testserver.ModeElicit)
	run := w.Factory(t)
	got := callText(t, run, "roots", "--roots")
	assert.JSONEq(t, `{"roots":[{"uri":"file://`+filepath.ToSlash(w.WS)+`","name":"ws"}]}`, got)

	run = w.Factory(t)
	var refused struct{ Error struct{ Code int } }
	require.NoError(t, json.Unmarshal([]byte(callText(t, run, "roots")), &refused))
	assert.Equal(t, -32601, refused.Error.Code)
}

// TestCallElicitationPrompt: the prompt names the server, shows its text
// escaped, and sends what the person typed (an empty line keeps a
// default).
func TestCallElicitationPrompt(t *testing.T) {
	run := world(t, testserver.ModeElicit).Factory(t)
	run.IO.In.(*bytes.Buffer).WriteString("y\n41\nAnn\n\nfoo\npending\nno\n")
	got := callText(t, run, "ask", "--elicitation=prompt")
	assert.JSONEq(t, `{"action":"accept","content":{"name":"Ann","age":41,"score":95.5,"status":"pending","verified":false}}`, got)
	errOut := run.ErrOut.String()
	assert.Contains(t, errOut, "The server t asks:")
	assert.Contains(t, errOut, `Please accept\x1b]0;pwned\x07 with defaults`, "the server's text is shown escaped")
	assert.NotContains(t, errOut, "\x1b")
	assert.Contains(t, errOut, "not accepted: not an option", "a wrong answer is asked again")
}

func TestCallElicitationPromptURL(t *testing.T) {
	run := world(t, testserver.ModeElicit).Factory(t)
	run.IO.In.(*bytes.Buffer).WriteString("y\n")
	got := callText(t, run, "ask_url", "--elicitation=prompt")
	assert.JSONEq(t, `{"action":"accept"}`, got)
	assert.Contains(t, run.ErrOut.String(), "https://example.com/sign-in")
	assert.Contains(t, run.ErrOut.String(), "mcpward does not open it")
}

func TestCallElicitationFlag(t *testing.T) {
	run := cmdtest.NewWorld(t, nil).Factory(t)
	err := cmdtest.Execute(run.F, NewCmdCall(run.F, nil), "t", "ask", "--elicitation=always")
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "--elicitation"), "%v", err)
}
