package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// contentCaller is a fakeCaller that is also a ContentCaller.
type contentCaller struct {
	fakeCaller
	mu      sync.Mutex
	prompts []ports.GetPromptRequest
	reads   []string
	subs    []string
	comps   []ports.CompleteRequest
	prompt  ports.PromptResult
	read    ports.ReadResult
	comp    ports.Completion
}

func (c *contentCaller) GetPrompt(_ context.Context, r ports.GetPromptRequest) (ports.PromptResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prompts = append(c.prompts, r)
	return c.prompt, nil
}

func (c *contentCaller) ReadResource(_ context.Context, r ports.ReadRequest) (ports.ReadResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads = append(c.reads, r.URI)
	return c.read, nil
}

func (c *contentCaller) Subscribe(_ context.Context, uri string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subs = append(c.subs, "+"+uri)
	return nil
}

func (c *contentCaller) Unsubscribe(_ context.Context, uri string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subs = append(c.subs, "-"+uri)
	return nil
}

func (c *contentCaller) Complete(_ context.Context, r ports.CompleteRequest) (ports.Completion, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.comps = append(c.comps, r)
	return c.comp, nil
}

func raws(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

func reasonOf(t *testing.T, err error) string {
	t.Helper()
	require.Error(t, err)
	var re *refusal.Error
	require.ErrorAs(t, err, &re)
	return re.Reason
}

func manyArgs(n int) string {
	var b strings.Builder
	b.WriteString(`{"name":"big","arguments":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"a%d"}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestBuildPromptsAndResources(t *testing.T) {
	l := Lists{
		Prompts: raws(
			`{"name":"greet","description":"d","arguments":[{"name":"who","required":true},{"name":"style"}]}`,
			manyArgs(10_000),
			manyArgs(MaxPromptArguments),
			`{"name":"greet"}`,
			`{"name":"dupargs","arguments":[{"name":"a"},{"name":"a"}]}`,
			`{"name":"noname","arguments":[{"title":"x"}]}`,
			`{"name":""}`,
		),
		Resources: raws(
			`{"uri":"test://static/1","name":"one","mimeType":"text/plain","size":5}`,
			`{"uri":"test://static/1","name":"again"}`,
			`{"uri":"no-scheme","name":"rel"}`,
			`{"uri":5}`,
		),
		ResourceTemplates: raws(
			`{"uriTemplate":"test://static/{id}","name":"t"}`,
			`{"uriTemplate":"test://{","name":"bad"}`,
			`{"uriTemplate":"test://static/{id}"}`,
		),
	}
	cat := Build("srv", ports.SessionIdentity{ServerID: "srv"}, l, &contentCaller{}, nil)
	require.Len(t, cat.Prompts, 2)
	assert.Equal(t, "mcp__srv__greet", cat.Prompts[0].HostName())
	assert.Equal(t, []ports.PromptArgument{{Name: "who", Required: true}, {Name: "style"}}, cat.Prompts[0].Arguments())
	assert.Equal(t, "big", cat.Prompts[1].NameOnServer(), "MaxPromptArguments arguments are admitted")
	require.Len(t, cat.Resources, 1)
	assert.Equal(t, "one", cat.Resources[0].Name())
	assert.Equal(t, int64(5), cat.Resources[0].Size())
	assert.Equal(t, ToolName("srv", "test://static/1"), cat.Resources[0].HostName())
	require.Len(t, cat.ResourceTemplates, 1)
	assert.Equal(t, []string{"id"}, cat.ResourceTemplates[0].Vars())
	assert.Equal(t, []Rejected{
		{"srv", ports.ListPrompts, "", ReasonInvalidEntry},
		{"srv", ports.ListPrompts, "big", ReasonTooManyArguments},
		{"srv", ports.ListPrompts, "dupargs", ReasonInvalidEntry},
		{"srv", ports.ListPrompts, "greet", ReasonDuplicateName},
		{"srv", ports.ListPrompts, "noname", ReasonInvalidEntry},
		{"srv", ports.ListResourceTemplates, "test://static/{id}", ReasonDuplicateName},
		{"srv", ports.ListResourceTemplates, "test://{", ReasonInvalidTemplate},
		{"srv", ports.ListResources, "", ReasonInvalidEntry},
		{"srv", ports.ListResources, "no-scheme", ReasonInvalidEntry},
		{"srv", ports.ListResources, "test://static/1", ReasonDuplicateName},
	}, cat.Rejected)
}

func TestPromptNameCollision(t *testing.T) {
	// Two names that sanitize alike are different prompts with one
	// host-facing name only if the hash collides, so use a plain name and
	// the sanitized name of another to force one.
	other := "x y"
	host := ToolName("srv", other)
	tool := strings.TrimPrefix(host, ToolNamePrefix+"srv"+ToolNameSeparator)
	l := Lists{Prompts: raws(`{"name":"`+other+`"}`, `{"name":"`+tool+`"}`, `{"name":"ok"}`)}
	cat := Build("srv", ports.SessionIdentity{ServerID: "srv"}, l, nil, nil)
	require.Len(t, cat.Prompts, 1)
	assert.Equal(t, "ok", cat.Prompts[0].NameOnServer())
	assert.Len(t, cat.Rejected, 2)
	for _, r := range cat.Rejected {
		assert.Equal(t, ReasonNameCollision, r.Reason)
	}
}

func TestPromptGet(t *testing.T) {
	cc := &contentCaller{prompt: ports.PromptResult{Description: "d", Messages: []ports.PromptMessage{
		{Role: "user", Content: json.RawMessage(`{"type":"text","text":"hello"}`)},
	}}}
	l := Lists{Prompts: raws(`{"name":"greet","arguments":[{"name":"who","required":true},{"name":"style"}]}`)}
	p := Build("srv", ports.SessionIdentity{ServerID: "srv"}, l, cc, nil).Prompts[0]
	ctx := context.Background()

	_, err := p.Get(ctx, map[string]string{"who": "a", "extra": "x"})
	assert.Equal(t, ReasonUnknownArgument, reasonOf(t, err))
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	assert.NotContains(t, err.Error(), "extra", "the argument name is not echoed")
	assert.Contains(t, err.Error(), `it declares "who" and "style"`, "the declared names are")
	_, err = p.Get(ctx, map[string]string{"style": "x-value-9"})
	assert.Equal(t, ReasonMissingArgument, reasonOf(t, err))
	assert.Contains(t, err.Error(), `the required argument "who" has no value`)
	assert.NotContains(t, err.Error(), "x-value-9", "no value is echoed")
	assert.Empty(t, cc.prompts, "nothing is sent for refused arguments")

	res, err := p.Get(ctx, map[string]string{"who": ""})
	require.NoError(t, err)
	assert.Equal(t, "d", res.Description)
	assert.False(t, res.Truncated)
	assert.Equal(t, []ports.GetPromptRequest{{Name: "greet", Arguments: map[string]string{"who": ""}}}, cc.prompts)

	for _, bad := range []ports.PromptMessage{
		{Role: "system", Content: json.RawMessage(`{"type":"text","text":"x"}`)},
		{Role: "user", Content: json.RawMessage(`"x"`)},
		{Role: "user", Content: json.RawMessage(`{"type":`)},
	} {
		cc.prompt = ports.PromptResult{Messages: []ports.PromptMessage{bad}}
		_, err = p.Get(ctx, map[string]string{"who": "a"})
		assert.Equal(t, ReasonMalformedResult, reasonOf(t, err))
	}

	_, err = Build("srv", ports.SessionIdentity{}, l, &fakeCaller{}, nil).Prompts[0].Get(ctx, map[string]string{"who": "a"})
	assert.Equal(t, ReasonNoCaller, reasonOf(t, err), "a Caller that is not a ContentCaller")
}

func TestPromptGetCap(t *testing.T) {
	big := strings.Repeat("é", 3000)
	cc := &contentCaller{prompt: ports.PromptResult{Messages: []ports.PromptMessage{
		{Role: "user", Content: json.RawMessage(`{"type":"text","text":"` + big + `"}`)},
		{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"` + big + `"}`)},
		{Role: "user", Content: json.RawMessage(`{"type":"text","text":"` + big + `"}`)},
	}}}
	l := Lists{Prompts: raws(`{"name":"p"}`)}
	p := Build("srv", ports.SessionIdentity{}, l, cc, &Options{AdmissionCap: 4000}).Prompts[0]
	res, err := p.Get(context.Background(), nil)
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	require.Len(t, res.Messages, 2)
	assert.Equal(t, "assistant", res.Messages[1].Role)
	var c struct{ Text string }
	require.NoError(t, json.Unmarshal(res.Messages[1].Content, &c))
	assert.Equal(t, strings.Repeat("é", 1000), c.Text)
}

func TestResourceRead(t *testing.T) {
	cc := &contentCaller{}
	l := Lists{Resources: raws(`{"uri":"test://static/1"}`), ResourceTemplates: raws(`{"uriTemplate":"test://static/{id}"}`, `{"uriTemplate":"{+u}"}`)}
	cat := Build("srv", ports.SessionIdentity{}, l, cc, &Options{ReadCap: 10})
	ctx := context.Background()

	// Only ReadCap bytes are admitted, whatever the server sends.
	cc.read = ports.ReadResult{Contents: []ports.ResourceContents{
		{URI: "test://static/1", Text: "abcdefghé"}, // 10 bytes
		{URI: "test://static/1", Text: "more"},
	}}
	res, err := cat.Resources[0].Read(ctx)
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	require.Len(t, res.Contents, 1)
	assert.Equal(t, "abcdefghé", res.Contents[0].Text)

	cc.read = ports.ReadResult{Contents: []ports.ResourceContents{{Text: "abcdefghi"}, {Text: "é"}}}
	res, err = cat.ReadResource(ctx, "test://other")
	require.NoError(t, err)
	assert.Equal(t, "abcdefghi", res.Contents[0].Text)
	assert.Len(t, res.Contents, 1, "a cut that would split a character keeps none of it")
	assert.True(t, res.Truncated)

	cc.read = ports.ReadResult{Contents: []ports.ResourceContents{{IsBlob: true, Blob: make([]byte, 11)}}}
	res, err = cat.ReadResource(ctx, "test://blob")
	require.NoError(t, err)
	assert.Empty(t, res.Contents, "a blob over the cap is left out")
	assert.True(t, res.Truncated)

	cc.read = ports.ReadResult{Contents: []ports.ResourceContents{{IsBlob: true, Blob: make([]byte, 10)}}}
	res, err = cat.ReadResource(ctx, "test://blob")
	require.NoError(t, err)
	assert.Len(t, res.Contents, 1)
	assert.False(t, res.Truncated)

	_, err = cat.ReadResource(ctx, "relative/path")
	assert.Equal(t, ReasonInvalidURI, reasonOf(t, err))

	tpl := cat.ResourceTemplates[0]
	_, err = tpl.Read(ctx, map[string]string{"id": "7"})
	require.NoError(t, err)
	_, err = tpl.Read(ctx, map[string]string{"nope": "7"})
	assert.Equal(t, ReasonUnknownArgument, reasonOf(t, err))
	assert.Contains(t, err.Error(), `it has "id"`)
	assert.NotContains(t, err.Error(), "nope")
	_, err = cat.ResourceTemplates[1].Read(ctx, map[string]string{"u": "https://evil.example/"})
	assert.Equal(t, ReasonTemplateOrigin, reasonOf(t, err))
	assert.Equal(t, refusal.Refused, refusal.ClassOf(err))
	assert.Equal(t, []string{"test://static/1", "test://other", "test://blob", "test://blob", "test://static/7"}, cc.reads)

	require.NoError(t, cat.Resources[0].Subscribe(ctx))
	require.NoError(t, cat.Unsubscribe(ctx, "test://static/1"))
	assert.Equal(t, []string{"+test://static/1", "-test://static/1"}, cc.subs)
}

func TestComplete(t *testing.T) {
	vals := make([]string, 0, 150)
	for i := range 150 {
		vals = append(vals, fmt.Sprint(i))
	}
	vals[3] = strings.Repeat("x", MaxCompletionValueLen+1)
	cc := &contentCaller{comp: ports.Completion{Values: vals, Total: 150}}
	l := Lists{Prompts: raws(`{"name":"p","arguments":[{"name":"a"},{"name":"b"}]}`), ResourceTemplates: raws(`{"uriTemplate":"test://s/{id}"}`)}
	cat := Build("srv", ports.SessionIdentity{}, l, cc, nil)
	ctx := context.Background()

	c, err := cat.Prompts[0].Complete(ctx, "a", "1", map[string]string{"b": "x"})
	require.NoError(t, err)
	assert.Len(t, c.Values, MaxCompletionValues)
	assert.NotContains(t, c.Values, vals[3])
	assert.True(t, c.HasMore)
	_, err = cat.Prompts[0].Complete(ctx, "z", "1", nil)
	assert.Equal(t, ReasonUnknownArgument, reasonOf(t, err))
	_, err = cat.Prompts[0].Complete(ctx, "a", "1", map[string]string{"z": "1"})
	assert.Equal(t, ReasonUnknownArgument, reasonOf(t, err))
	_, err = cat.ResourceTemplates[0].Complete(ctx, "id", "", nil)
	require.NoError(t, err)
	_, err = cat.ResourceTemplates[0].Complete(ctx, "x", "", nil)
	assert.Equal(t, ReasonUnknownArgument, reasonOf(t, err))
	assert.Equal(t, []ports.CompleteRequest{
		{Ref: ports.CompletionRef{Type: ports.CompletionRefPrompt, Name: "p"}, Argument: "a", Value: "1", Context: map[string]string{"b": "x"}},
		{Ref: ports.CompletionRef{Type: ports.CompletionRefResource, Name: "test://s/{id}"}, Argument: "id"},
	}, cc.comps)
}

func TestSetEntries(t *testing.T) {
	a := Build("a", ports.SessionIdentity{}, Lists{Prompts: raws(`{"name":"p"}`, `{"name":"q"}`), Resources: raws(`{"uri":"x://1"}`)}, nil, nil)
	b := Build("b", ports.SessionIdentity{}, Lists{Prompts: raws(`{"name":"p"}`)}, nil, nil)
	s := NewSet([]*Catalog{a, b}, nil)
	names := func(ps []*Prompt) (out []string) {
		for _, p := range ps {
			out = append(out, p.HostName())
		}
		return out
	}
	assert.Equal(t, []string{"mcp__a__p", "mcp__a__q", "mcp__b__p"}, names(s.Prompts()))
	p, ok := s.Prompt("mcp__b__p")
	require.True(t, ok)
	assert.Equal(t, "b", p.Server())
	require.Len(t, s.Resources(), 1)
	_, ok = s.Resource(ToolName("a", "x://1"))
	assert.True(t, ok)
	assert.Empty(t, s.ResourceTemplates())

	// A server named "a__p" could only collide through a non-plain pair;
	// force a cross-server collision with one catalog under two ids.
	c := Build("a", ports.SessionIdentity{}, Lists{Prompts: raws(`{"name":"p"}`)}, nil, nil)
	c.srv.id = "a2" // same host name "mcp__a__p", another server
	s = NewSet([]*Catalog{a, c}, nil)
	assert.Equal(t, []string{"mcp__a__q"}, names(s.Prompts()))
	assert.Contains(t, s.Rejected(), Rejected{Server: "a2", Kind: ports.ListPrompts, Name: "p", Reason: ReasonNameCollision})
}
