package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

var okResult = ports.CallResult{Content: json.RawMessage(`[{"type":"text","text":"ok"}]`)}

func TestToolCallPassesServerNameArgsAndTraceparent(t *testing.T) {
	c := &fakeCaller{res: ports.CallResult{Content: json.RawMessage(`[{"type":"text","text":"hi"}]`), IsError: true}}
	cat := Build("my.server", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, "read.file", `{"type":"object"}`)}}, c, nil)
	require.Len(t, cat.Tools, 1)
	tool := cat.Tools[0]
	assert.Equal(t, "read.file", tool.NameOnServer())
	assert.NotEqual(t, "read.file", tool.Spec().Name)

	ctx := ports.WithTraceparent(context.Background(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	res, err := tool.Call(ctx, json.RawMessage(`{"a":1}`))
	require.NoError(t, err)
	assert.True(t, res.IsError, "IsError passed through")
	assert.False(t, res.Truncated)
	assert.JSONEq(t, `[{"type":"text","text":"hi"}]`, string(res.Content))

	_, err = tool.Call(context.Background(), nil)
	require.NoError(t, err)
	_, err = tool.Call(context.Background(), json.RawMessage("  \n"))
	require.NoError(t, err)

	reqs := c.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, ports.CallRequest{Name: "read.file", Arguments: json.RawMessage(`{"a":1}`),
		Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, reqs[0])
	assert.Equal(t, ports.CallRequest{Name: "read.file", Arguments: json.RawMessage(`{}`)}, reqs[1])
	assert.Equal(t, `{}`, string(reqs[2].Arguments))
}

func TestToolCallErrors(t *testing.T) {
	callerErr := refusal.New(refusal.Transient, "connection_lost", "srv")
	tests := []struct {
		name    string
		caller  Caller
		class   refusal.Class
		reason  string
		sameErr error
	}{
		{"caller error unchanged", &fakeCaller{err: callerErr}, 0, "", callerErr},
		{"plain caller error unchanged", &fakeCaller{err: context.Canceled}, 0, "", context.Canceled},
		{"no caller", nil, refusal.Internal, ReasonNoCaller, nil},
		{"content an object", &fakeCaller{res: ports.CallResult{Content: json.RawMessage(`{"type":"text"}`)}}, refusal.Protocol, ReasonMalformedResult, nil},
		{"content items not objects", &fakeCaller{res: ports.CallResult{Content: json.RawMessage(`[{"type":"text","text":"a"},"b"]`)}}, refusal.Protocol, ReasonMalformedResult, nil},
		{"content invalid JSON", &fakeCaller{res: ports.CallResult{Content: json.RawMessage(`[{"type":`)}}, refusal.Protocol, ReasonMalformedResult, nil},
		{"content null", &fakeCaller{res: ports.CallResult{Content: json.RawMessage(`null`)}}, refusal.Protocol, ReasonMalformedResult, nil},
		{"content nested arrays", &fakeCaller{res: ports.CallResult{Content: json.RawMessage(`[[{}]]`)}}, refusal.Protocol, ReasonMalformedResult, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Caller
			if tt.caller != nil {
				c = tt.caller
			}
			tool := oneTool(t, `{"type":"object"}`, c, nil)
			res, err := tool.Call(context.Background(), nil)
			require.Error(t, err)
			assert.Equal(t, ports.ToolResult{}, res)
			if tt.sameErr != nil {
				assert.Same(t, tt.sameErr, err)
				return
			}
			var re *refusal.Error
			require.True(t, errors.As(err, &re))
			assert.Equal(t, tt.class, re.Class)
			assert.Equal(t, tt.reason, re.Reason)
			assert.Equal(t, "srv", re.Server)
		})
	}
}

func TestAdmissionCap(t *testing.T) {
	text := func(s string) string {
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return string(b)
	}
	img := `{"type":"image","data":"QUJD","mimeType":"image/ü"}`
	link := `{"type":"resource_link","uri":"file:///ü","name":"n"}`
	linkChars := utf8.RuneCountInString(link)
	tests := []struct {
		name      string
		cap       int
		content   string
		want      string
		truncated bool
	}{
		{"within cap unchanged", 10, `[` + text("héllo") + `]`, `[` + text("héllo") + `]`, false},
		{"exactly at cap in characters though longer in bytes", 5, `[` + text("ééééé") + `]`, `[` + text("ééééé") + `]`, false},
		{"text cut at a rune boundary", 3, `[` + text("日本語テキスト") + `]`, `[` + text("日本語") + `]`, true},
		{"escapes count as the characters they stand for", 4, `[{"type":"text","text":"\u0041\n\"b\\"}]`, `[{"type":"text","text":"A\n\"b"}]`, true},
		{"later items dropped", 6, `[` + text("abc") + `,` + text("defg") + `,` + text("h") + `]`, `[` + text("abc") + `,` + text("def") + `]`, true},
		{"other members of a cut text item kept", 2, `[{"type":"text","text":"abcd","annotations":{"priority":1}}]`,
			`[{"annotations":{"priority":1},"text":"ab","type":"text"}]`, true},
		{"resource link counts its JSON characters", linkChars, `[` + link + `]`, `[` + link + `]`, false},
		{"resource link crossing the cap dropped", linkChars - 1, `[` + link + `]`, `[]`, true},
		{"image does not count against the cap", 1, `[` + img + `]`, `[` + img + `]`, false},
		{"image kept after the cap is reached", 3, `[` + text("abcdef") + `,` + img + `,` + text("x") + `]`, `[` + text("abc") + `,` + img + `]`, true},
		{"text item after the cap is reached dropped", 3, `[` + text("abc") + `,` + text("d") + `]`, `[` + text("abc") + `]`, true},
		{"empty content", 3, ``, `[]`, false},
		{"empty array", 3, `[]`, `[]`, false},
		{"whitespace", 4, " [ " + text("abcdef") + " , " + text("g") + " ] ", `[` + text("abcd") + `]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, blocks, truncated, reason := admitContent(json.RawMessage(tt.content), tt.cap, DefaultMaxBinaryBytes)
			require.Empty(t, reason)
			assert.JSONEq(t, tt.want, string(got))
			assert.Equal(t, tt.truncated, truncated)
			// The typed blocks are the admitted JSON's, decoded.
			var items []json.RawMessage
			require.NoError(t, json.Unmarshal(got, &items))
			require.Len(t, blocks, len(items))
			for i, it := range items {
				b, r := decodeBlock(it, DefaultMaxBinaryBytes)
				require.Empty(t, r)
				assert.Equal(t, b, blocks[i])
			}
		})
	}
}

func TestAdmissionCapThroughCall(t *testing.T) {
	big := strings.Repeat("x", DefaultAdmissionCap+10)
	content, _ := json.Marshal([]map[string]string{{"type": "text", "text": big}})
	c := &fakeCaller{res: ports.CallResult{Content: content}}
	tests := []struct {
		name string
		meta map[string]any
		opts *Options
		want int
	}{
		{"default cap", nil, nil, DefaultAdmissionCap},
		{"option cap", nil, &Options{AdmissionCap: 2000}, 2000},
		{"meta raises the cap within range", map[string]any{MetaMaxResultSizeChars: 200_000.0}, nil, DefaultAdmissionCap + 10},
		{"meta lowers the cap", map[string]any{MetaMaxResultSizeChars: 1500.0}, &Options{AdmissionCap: 3000}, 1500},
		{"invalid meta keeps the option cap", map[string]any{MetaMaxResultSizeChars: 999.0}, &Options{AdmissionCap: 3000}, 3000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := item(t, "t", `{}`)
			it.Meta = tt.meta
			cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{it}}, c, tt.opts)
			require.Len(t, cat.Tools, 1)
			res, err := cat.Tools[0].Call(context.Background(), nil)
			require.NoError(t, err)
			var items []struct{ Text string }
			require.NoError(t, json.Unmarshal(res.Content, &items))
			require.Len(t, items, 1)
			assert.Len(t, items[0].Text, tt.want)
			assert.Equal(t, tt.want < len(big), res.Truncated)
		})
	}
}

func TestToolConcurrentFirstCalls(t *testing.T) {
	c := &fakeCaller{res: okResult}
	tool := oneTool(t, validateSchema, c, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			args := `{"path":"/a","filter":1}`
			if i%2 == 1 {
				args = `{"path":"a","filter":1}`
			}
			_, err := tool.Call(context.Background(), json.RawMessage(args))
			if (err == nil) != (i%2 == 0) {
				errs <- errors.New("wrong verdict")
			}
			_ = tool.Spec()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Len(t, c.requests(), 32)
}

func TestToolSpecAndAccessors(t *testing.T) {
	it := item(t, "search", `{"type":"object","properties":{"q":{"anyOf":[]},"n":{"type":"integer"}}}`)
	it.Description = "Search things"
	cat := Build("web", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{it}}, nil, &Options{AdmissionCap: 1234})
	require.Len(t, cat.Tools, 1)
	tool := cat.Tools[0]
	spec := tool.Spec()
	assert.Equal(t, "mcp__web__search", spec.Name)
	assert.Equal(t, "mcp__web__search", tool.HostName())
	assert.Equal(t, "Search things", spec.Description)
	assert.Equal(t, `{"properties":{"n":{"type":"integer"},"q":{}},"type":"object"}`, string(spec.InputSchema))
	assert.Equal(t, len(spec.InputSchema), cap(spec.InputSchema), "appending to the schema must not write into shared memory")
	assert.Equal(t, []string{"/properties/q"}, tool.Narrowed())
	tool.Narrowed()[0] = "changed"
	assert.Equal(t, []string{"/properties/q"}, tool.Narrowed(), "Narrowed returns a copy")
	assert.Equal(t, 1234, tool.ResultCap())
	assert.Equal(t, "search", tool.NameOnServer())
}

func TestSpecSchemaCapacityClipped(t *testing.T) {
	// A schema too large for the shared blocks gets its own copy; appending
	// to what Spec returns must not write into memory another Spec call
	// returns either.
	var props strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&props, `"p%d":{"type":"string"},`, i)
	}
	big := `{"type":"object","properties":{` + strings.TrimSuffix(props.String(), ",") + `}}`
	for _, s := range []string{`{"type":"object"}`, big} {
		tool := oneTool(t, s, nil, nil)
		in := tool.Spec().InputSchema
		assert.Equal(t, len(in), cap(in))
	}
}

// TestCallPanicInResultCheck: a panic while checking or cutting a result
// (after the caller returned, outside the supervisor's boundary) is the
// tool's Internal "panic" error, not a crash of the host.
func TestCallPanicInResultCheck(t *testing.T) {
	saved := admitResult
	t.Cleanup(func() { admitResult = saved })
	admitResult = func(*Tool, ports.CallResult) (ports.ToolResult, error) { panic("admit broke") }
	c := &fakeCaller{res: ports.CallResult{Content: json.RawMessage(`[]`)}}
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, "t", `{}`)}}, c, nil)
	require.Len(t, cat.Tools, 1)
	var res ports.ToolResult
	var err error
	require.NotPanics(t, func() { res, err = cat.Tools[0].Call(context.Background(), nil) })
	assert.Equal(t, refusal.Internal, refusal.ClassOf(err))
	assert.Equal(t, ReasonPanic, refusal.ReasonOf(err))
	assert.NotContains(t, err.Error(), "admit broke", "the panic value's text is not the error's")
	assert.Zero(t, res)
}

// FuzzAdmit: any content bytes and any cap: admit never panics; what it
// admits is a JSON array of objects, and the same content within a cap
// that fits it is unchanged.
func FuzzAdmit(f *testing.F) {
	f.Add([]byte(`[{"type":"text","text":"héllo"}]`), 3)
	f.Add([]byte(`[{"type":"text","text":"\u0041\n\"b\\"},{"type":"image","data":"x"}]`), 2)
	f.Add([]byte(` [ {"type":"text","text":5} ] `), 0)
	f.Add([]byte(`[{"type":"text","text":"\ud800"}]`), 1)
	f.Add([]byte(`{"not":"an array"}`), 10)
	f.Fuzz(func(t *testing.T, content []byte, limit int) {
		if limit < 0 {
			limit = -limit
		}
		if limit < 0 {
			limit = 0
		}
		got, blocks, _, reason := admitContent(json.RawMessage(content), limit, 64)
		if reason != "" {
			return
		}
		var items []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(got, &items), "admitted content is an array of objects: %q", got)
		require.Len(t, blocks, len(items), "one typed block per admitted item")
		for _, b := range blocks {
			require.LessOrEqual(t, len(b.Data), 64, "binary blocks within their own limit")
		}
	})
}
