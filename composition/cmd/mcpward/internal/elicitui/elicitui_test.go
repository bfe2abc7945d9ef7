package elicitui

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/ports"
)

func ptr[T any](v T) *T { return &v }

var form = ports.ElicitRequest{ServerID: "srv\x1b[2J", Mode: ports.ElicitForm, Message: "line one\nmcpward: fake\u202e", Schema: ports.ElicitSchema{Fields: []ports.ElicitField{
	{Name: "count", Type: ports.FieldInteger, Minimum: ptr(1.0), Required: true},
	{Name: "nick", Type: ports.FieldString},
	{Name: "tags", Type: ports.FieldMultiSelect, Options: []ports.ElicitOption{{Value: "a", Title: "Apple\x07"}, {Value: "b"}}, Default: []string{"a"}},
}}}

func TestPrompter(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		req   ports.ElicitRequest
		want  ports.ElicitResult
		shown []string
	}{
		{"accept", "y\n0\n2.5\n3\n\nb,a\n", form,
			ports.ElicitResult{Action: ports.ElicitAccept, Content: map[string]any{"count": 3.0, "tags": []string{"b", "a"}}},
			[]string{`The server srv\x1b[2J asks:`, "line one\n    mcpward: fake\\u202e", "not accepted: out of range", "not accepted: wrong type", `a (Apple\x07)`}},
		{"required re-asked then default", "yes\n\n1\nbob\n\n", form,
			ports.ElicitResult{Action: ports.ElicitAccept, Content: map[string]any{"count": 1.0, "nick": "bob", "tags": []string{"a"}}},
			[]string{"an answer is required"}},
		{"decline", "n\n", form, ports.ElicitResult{Action: ports.ElicitDecline}, nil},
		{"cancel", "c\n", form, ports.ElicitResult{Action: ports.ElicitCancel}, []string{"(cancelled)"}},
		{"end of input cancels", "y\n", form, ports.ElicitResult{Action: ports.ElicitCancel}, nil},
		{"three wrong answers cancel", "y\nx\nx\nx\n", form, ports.ElicitResult{Action: ports.ElicitCancel}, []string{"not a valid integer"}},
		{"url accept", "y\n", ports.ElicitRequest{ServerID: "s", Mode: ports.ElicitURL, URL: "https://example.com/x"},
			ports.ElicitResult{Action: ports.ElicitAccept}, []string{"https://example.com/x", "does not open it"}},
		{"url decline", "no\n", ports.ElicitRequest{ServerID: "s", Mode: ports.ElicitURL, URL: "https://example.com/x"},
			ports.ElicitResult{Action: ports.ElicitDecline}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			p := NewPrompter(strings.NewReader(tt.in), &out)
			res, err := p.Elicit(context.Background(), tt.req)
			require.NoError(t, err)
			assert.Equal(t, tt.want, res)
			for _, s := range tt.shown {
				assert.Contains(t, out.String(), s)
			}
			assert.NotContains(t, out.String(), "\x1b")
			assert.NotContains(t, out.String(), "\x07")
			assert.NotContains(t, out.String(), "\u202e")
			assert.NotContains(t, out.String(), "\nmcpward:", "a server's line never starts a line")
		})
	}
}

// TestPrompterContext: a question whose ctx ends while it waits is
// cancelled; the line typed later answers the next question.
func TestPrompterContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	p := NewPrompter(pr, io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := p.Elicit(ctx, form)
	require.NoError(t, err)
	assert.Equal(t, ports.ElicitCancel, res.Action)
	go func() { _, _ = io.WriteString(pw, "n\n") }()
	res, err = p.Elicit(context.Background(), form)
	require.NoError(t, err)
	assert.Equal(t, ports.ElicitDecline, res.Action)

	res, err = NewPrompter(nil, io.Discard).Elicit(context.Background(), form)
	require.NoError(t, err)
	assert.Equal(t, ports.ElicitCancel, res.Action, "no input: cancelled")
}

func TestFlags(t *testing.T) {
	var f Flags
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	AddFlags(fs, &f)
	require.Error(t, fs.Parse([]string{"--elicitation=yes"}))
	require.NoError(t, fs.Parse([]string{"--elicitation=defaults", "--roots"}))
	assert.Equal(t, Flags{Mode: ModeDefaults, Roots: true}, f)

	ios, _, _, _ := iostreams.Test()
	assert.Nil(t, Flags{}.Elicitation(ios), "off a terminal nothing is declared")
	ios.SetStdinTTY(true)
	assert.Nil(t, Flags{}.Elicitation(ios), "stderr must be a terminal too")
	ios.SetStderrTTY(true)
	require.NotNil(t, Flags{}.Elicitation(ios))
	assert.IsType(t, &Prompter{}, Flags{}.Elicitation(ios).Elicitor)
	for _, m := range []string{ModeDefaults, ModeDecline, ModePrompt} {
		assert.NotNil(t, Flags{Mode: m}.Elicitation(&iostreams.IOStreams{}), m)
	}

	assert.Nil(t, Flags{}.RootsOf("/w"))
	assert.Nil(t, Flags{Roots: true}.RootsOf(""))
	r := Flags{Roots: true}.RootsOf("/w/x")
	require.NotNil(t, r)
	l, err := r.Roots.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []ports.Root{{URI: "file:///w/x", Name: "x"}}, l)
}

// TestQuiet: progress notes written while a question is open are dropped.
func TestQuiet(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	p := NewPrompter(pr, io.Discard)
	var notes bytes.Buffer
	q := p.Quiet(&notes)
	_, _ = io.WriteString(q, "before\n")
	done := make(chan ports.ElicitResult)
	go func() {
		res, _ := p.Elicit(context.Background(), form)
		done <- res
	}()
	require.Eventually(t, func() bool { return p.asking.Load() == 1 }, 5*time.Second, time.Millisecond)
	_, _ = io.WriteString(q, "during\n")
	_, _ = io.WriteString(pw, "n\n")
	assert.Equal(t, ports.ElicitDecline, (<-done).Action)
	_, _ = io.WriteString(q, "after\n")
	assert.Equal(t, "before\nafter\n", notes.String())
}
