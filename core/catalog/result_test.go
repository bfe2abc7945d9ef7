package catalog

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// secretValue stands for an argument or result value that must never reach
// an error's text.
const secretValue = "s3cr3t-VALUE-9f2c"

func ptr[T any](v T) *T { return &v }

func TestTypedContentBlocks(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nrest")
	wav := []byte("RIFF....WAVE")
	content := `[
		{"type":"text","text":"plain"},
		{"type":"text","text":"a\"quoted\"\nline","annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"}},
		{"type":"image","data":"` + base64.StdEncoding.EncodeToString(png) + `","mimeType":"image/png"},
		{"type":"audio","data":"` + base64.StdEncoding.EncodeToString(wav) + `","mimeType":"audio/wav"},
		{"type":"resource_link","uri":"file:///r/1","name":"one","title":"One","description":"the first","mimeType":"text/plain","size":42},
		{"type":"resource","resource":{"uri":"file:///r/2","mimeType":"text/plain","text":"embedded"}},
		{"type":"resource","resource":{"uri":"file:///r/3","mimeType":"application/octet-stream","blob":""}},
		{"type":"resource","resource":{"uri":"file:///r/4"}}
	]`
	c := &fakeCaller{res: ports.CallResult{Content: json.RawMessage(content)}}
	res, err := oneTool(t, `{}`, c, nil).Call(context.Background(), nil)
	require.NoError(t, err)
	assert.False(t, res.Truncated)
	assert.Equal(t, content, string(res.Content), "content that fits is handed over byte for byte")
	assert.Equal(t, []ports.ContentBlock{
		{Kind: ports.ContentText, Text: "plain"},
		{Kind: ports.ContentText, Text: "a\"quoted\"\nline", Annotations: &ports.ContentAnnotations{
			Audience: []string{"user"}, Priority: ptr(0.5), LastModified: "2025-01-01T00:00:00Z"}},
		{Kind: ports.ContentImage, Data: png, MIMEType: "image/png"},
		{Kind: ports.ContentAudio, Data: wav, MIMEType: "audio/wav"},
		{Kind: ports.ContentResourceLink, URI: "file:///r/1", Name: "one", Title: "One", Description: "the first", MIMEType: "text/plain", Size: ptr(int64(42))},
		{Kind: ports.ContentResource, URI: "file:///r/2", MIMEType: "text/plain", Text: "embedded"},
		{Kind: ports.ContentResource, URI: "file:///r/3", MIMEType: "application/octet-stream", Data: []byte{}},
		{Kind: ports.ContentResource, URI: "file:///r/4"},
	}, res.Blocks)
}

// TestResultRefusals: each kind of bad result is a typed Protocol refusal
// naming its reason, holds no server text, and the tool stays usable: the
// next call with a good result succeeds.
func TestResultRefusals(t *testing.T) {
	big := base64.StdEncoding.EncodeToString(make([]byte, 1025))
	tests := []struct {
		name    string
		content string
		reason  string
	}{
		{"unknown content type", `[{"type":"text","text":"ok"},{"type":"video","data":"` + secretValue + `"}]`, ReasonUnknownContentType},
		{"type missing", `[{"text":"` + secretValue + `"}]`, ReasonMalformedResult},
		{"type not a string", `[{"type":1}]`, ReasonMalformedResult},
		{"text without text", `[{"type":"text"}]`, ReasonMalformedResult},
		{"text not a string", `[{"type":"text","text":5}]`, ReasonMalformedResult},
		{"image without data", `[{"type":"image","mimeType":"image/png"}]`, ReasonMalformedResult},
		{"image data not base64", `[{"type":"image","data":"` + secretValue + `!","mimeType":"image/png"}]`, ReasonMalformedResult},
		{"huge image", `[{"type":"image","data":"` + big + `","mimeType":"image/png"}]`, ReasonBinaryTooLarge},
		{"huge audio", `[{"type":"audio","data":"` + big + `","mimeType":"audio/wav"}]`, ReasonBinaryTooLarge},
		{"huge embedded blob", `[{"type":"resource","resource":{"uri":"x:","blob":"` + big + `"}}]`, ReasonBinaryTooLarge},
		{"resource link without uri", `[{"type":"resource_link","name":"n"}]`, ReasonMalformedResult},
		{"resource with text and blob", `[{"type":"resource","resource":{"uri":"x:","text":"a","blob":""}}]`, ReasonMalformedResult},
		{"resource without uri", `[{"type":"resource","resource":{"text":"a"}}]`, ReasonMalformedResult},
		{"annotations mistyped", `[{"type":"text","text":"a","annotations":{"priority":"high"}}]`, ReasonMalformedResult},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := true
			c := &fakeCaller{fn: func(context.Context, ports.CallRequest) (ports.CallResult, error) {
				if bad {
					return ports.CallResult{Content: json.RawMessage(tt.content)}, nil
				}
				return okResult, nil
			}}
			tool := oneTool(t, `{}`, c, &Options{MaxBinaryBytes: 1024})
			res, err := tool.Call(context.Background(), nil)
			require.Error(t, err)
			assert.Zero(t, res)
			assert.Equal(t, refusal.Protocol, refusal.ClassOf(err))
			assert.Equal(t, tt.reason, refusal.ReasonOf(err))
			assert.NotContains(t, err.Error(), secretValue)
			bad = false
			res, err = tool.Call(context.Background(), nil)
			require.NoError(t, err, "the tool stays usable")
			assert.Equal(t, "ok", res.Blocks[0].Text)
		})
	}
}

func TestBinaryLimitIsItsOwn(t *testing.T) {
	data := make([]byte, 1024)
	content := `[{"type":"text","text":"abcdef"},{"type":"image","data":"` + base64.StdEncoding.EncodeToString(data) + `","mimeType":"image/png"}]`
	c := &fakeCaller{res: ports.CallResult{Content: json.RawMessage(content)}}
	res, err := oneTool(t, `{}`, c, &Options{AdmissionCap: 3, MaxBinaryBytes: 1024}).Call(context.Background(), nil)
	require.NoError(t, err, "an image at the binary limit passes, whatever the text cap")
	assert.True(t, res.Truncated, "the text was cut")
	require.Len(t, res.Blocks, 2)
	assert.Equal(t, "abc", res.Blocks[0].Text)
	assert.Equal(t, data, res.Blocks[1].Data)

	_, err = oneTool(t, `{}`, c, &Options{MaxBinaryBytes: 1023}).Call(context.Background(), nil)
	assert.Equal(t, ReasonBinaryTooLarge, refusal.ReasonOf(err))
	assert.Equal(t, DefaultMaxBinaryBytes, oneTool(t, `{}`, nil, nil).BinaryCap())
}

const outSchema = `{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"},
	"extra":{"anyOf":[{"type":"string"}]}},"required":["temperature"]}`

// outTool builds a tool with the input schema {} and output schema out.
func outTool(t *testing.T, out string, c Caller, opts *Options) (*Tool, *Catalog) {
	t.Helper()
	it := item(t, "t", `{}`)
	it.OutputSchema = decode(t, out)
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{it}}, c, opts)
	require.Len(t, cat.Tools, 1, "rejected: %v", cat.Rejected)
	return cat.Tools[0], cat
}

func TestOutputSchemaNarrowedAndReported(t *testing.T) {
	tool, cat := outTool(t, outSchema, nil, nil)
	assert.JSONEq(t, `{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"},"extra":{}},"required":["temperature"]}`,
		string(tool.Spec().OutputSchema))
	assert.Equal(t, []string{"/properties/extra"}, tool.OutputNarrowed())
	assert.Equal(t, []Diagnostic{{Tool: "t", Reason: DiagOutputSchemaNarrowed, Paths: []string{"/properties/extra"}}}, cat.Diagnostics)
}

func TestOutputSchemaInvalidKeepsTheTool(t *testing.T) {
	for _, out := range []string{`{"type":"array","items":{}}`, `"object"`, `[1]`, `true`} {
		t.Run(out, func(t *testing.T) {
			c := &fakeCaller{res: ports.CallResult{Content: okResult.Content, StructuredContent: json.RawMessage(`[1,2]`)}}
			tool, cat := outTool(t, out, c, nil)
			assert.Nil(t, tool.Spec().OutputSchema)
			assert.Equal(t, []Diagnostic{{Tool: "t", Reason: DiagOutputSchemaInvalid}}, cat.Diagnostics)
			res, err := tool.Call(context.Background(), nil)
			require.NoError(t, err, "usable as a tool without an output schema")
			assert.Equal(t, `[1,2]`, string(res.StructuredContent), "unchecked, as for any tool without one")
		})
	}
}

func TestStructuredContent(t *testing.T) {
	tests := []struct {
		name       string
		out        string // "" for no output schema
		structured string
		isError    bool
		want       string // the StructuredContent handed over
		reason     string // the refusal's reason
		path, rule string
		expected   string
		got        string
	}{
		{"matches", outSchema, `{"temperature":21.5,"conditions":"sunny","extra":[1]}`, false, `{"temperature":21.5,"conditions":"sunny","extra":[1]}`, "", "", "", "", ""},
		{"mismatched type", outSchema, `{"temperature":"` + secretValue + `"}`, false, "", ReasonStructuredContentInvalid, "/temperature", RuleType, "number", "string"},
		{"required missing", outSchema, `{"conditions":"` + secretValue + `"}`, false, "", ReasonStructuredContentInvalid, "/temperature", RuleRequired, "a value (the property is required)", "none"},
		{"not an object", outSchema, `["` + secretValue + `"]`, false, "", ReasonStructuredContentInvalid, "/", RuleType, "object", "array"},
		{"missing", outSchema, ``, false, "", ReasonStructuredContentMissing, "", "", "", ""},
		{"null is missing", outSchema, `null`, false, "", ReasonStructuredContentMissing, "", "", "", ""},
		{"error results are not checked", outSchema, `{"temperature":"n/a"}`, true, `{"temperature":"n/a"}`, "", "", "", "", ""},
		{"error results may lack it", outSchema, ``, true, "", "", "", "", "", ""},
		{"no output schema: unchecked", "", `{"anything":[true]}`, false, `{"anything":[true]}`, "", "", "", "", ""},
		{"no output schema: invalid JSON", "", `{"a":`, false, "", ReasonMalformedResult, "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeCaller{res: ports.CallResult{Content: okResult.Content, StructuredContent: json.RawMessage(tt.structured), IsError: tt.isError}}
			var tool *Tool
			if tt.out == "" {
				tool = oneTool(t, `{}`, c, nil)
			} else {
				tool, _ = outTool(t, tt.out, c, nil)
			}
			res, err := tool.Call(context.Background(), nil)
			if tt.reason == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, string(res.StructuredContent))
				assert.Equal(t, "ok", res.Blocks[0].Text)
				return
			}
			require.Error(t, err)
			assert.Zero(t, res, "a refused result is not handed over")
			assert.Equal(t, refusal.Protocol, refusal.ClassOf(err))
			assert.Equal(t, tt.reason, refusal.ReasonOf(err))
			assert.NotContains(t, err.Error(), secretValue)
			var se *StructuredContentError
			if tt.path == "" {
				assert.False(t, errors.As(err, &se))
				return
			}
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.path, se.Path)
			assert.Equal(t, tt.rule, se.Rule)
			assert.Equal(t, tt.expected, se.Expected)
			assert.Equal(t, tt.got, se.Got)
			assert.NotContains(t, se.Explain(), secretValue)
		})
	}
}

func TestStructuredContentLargerThanTheCapLeftOut(t *testing.T) {
	sc := `{"temperature":1,"conditions":"` + strings.Repeat("x", 2000) + `"}`
	c := &fakeCaller{res: ports.CallResult{Content: okResult.Content, StructuredContent: json.RawMessage(sc)}}
	tool, _ := outTool(t, outSchema, c, &Options{AdmissionCap: 1000})
	res, err := tool.Call(context.Background(), nil)
	require.NoError(t, err)
	assert.Nil(t, res.StructuredContent)
	assert.True(t, res.Truncated)
}

func TestResultMetaPassedOnlyByKey(t *testing.T) {
	c := &fakeCaller{res: ports.CallResult{Content: okResult.Content, Meta: json.RawMessage(`{"a/b":1,"other":"` + secretValue + `"}`)}}
	res, err := oneTool(t, `{}`, c, nil).Call(context.Background(), nil)
	require.NoError(t, err)
	assert.Nil(t, res.Meta, "no _meta key passes by default")

	res, err = oneTool(t, `{}`, c, &Options{ResultMetaKeys: []string{"a/b", "absent"}}).Call(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]json.RawMessage{"a/b": json.RawMessage(`1`)}, res.Meta)
}

func TestSpecTitleAndAnnotations(t *testing.T) {
	it := item(t, "t", `{}`)
	it.Title = "A Tool"
	it.Annotations = &ports.ToolAnnotations{Title: "Annotated", ReadOnlyHint: ptr(true), DestructiveHint: ptr(false)}
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{it}}, nil, nil)
	require.Len(t, cat.Tools, 1)
	it.Annotations.Title = "changed after Build"
	spec := cat.Tools[0].Spec()
	assert.Equal(t, "A Tool", spec.Title)
	assert.Equal(t, &ports.ToolAnnotations{Title: "Annotated", ReadOnlyHint: ptr(true), DestructiveHint: ptr(false)}, spec.Annotations)
	spec.Annotations.Title = "changed by a host"
	*spec.Annotations.ReadOnlyHint = false
	*it.Annotations.DestructiveHint = true
	again := cat.Tools[0].Spec()
	assert.Equal(t, "Annotated", again.Annotations.Title, "Spec returns a copy")
	assert.True(t, *again.Annotations.ReadOnlyHint, "a deep copy")
	assert.False(t, *again.Annotations.DestructiveHint, "Build keeps a deep copy")
	assert.Nil(t, oneTool(t, `{}`, nil, nil).Spec().Annotations)
}

// TestArgumentErrorsSayWhatWasExpected: an argument error names the path,
// the rule, what was expected and (for a type) what came, never the value.
func TestArgumentErrorsSayWhatWasExpected(t *testing.T) {
	schema := `{"type":"object","properties":{
		"req":{},"a":{"type":"number"},"i":{"type":"integer"},"n":{"type":["string","null"]},
		"min":{"type":"number","minimum":1},"xmax":{"type":"number","exclusiveMaximum":10},
		"s":{"type":"string","maxLength":3},"l":{"type":"array","minItems":2},
		"e":{"enum":["x","y"]},"p":{"type":"string","pattern":"^[a-z]+$"}},
		"required":["req"],"additionalProperties":false}`
	tests := []struct {
		args    string
		explain string
		rule    string
	}{
		{`{"req":1,"a":"` + secretValue + `"}`, "/a: expected number, got string", RuleType},
		{`{"req":1,"i":1.5}`, "/i: expected integer, got non-integer number", RuleType},
		{`{"req":1,"n":{"k":"` + secretValue + `"}}`, "/n: expected string or null, got object", RuleType},
		{`{"req":1,"min":0}`, "/min: expected a number >= 1", RuleMinimum},
		{`{"req":1,"xmax":10}`, "/xmax: expected a number < 10", RuleExclusiveMaximum},
		{`{"req":1,"s":"` + secretValue + `"}`, "/s: expected at most 3 characters", RuleMaxLength},
		{`{"req":1,"l":[1]}`, "/l: expected at least 2 items", RuleMinItems},
		{`{"req":1,"e":"` + secretValue + `"}`, "/e: expected one of the 2 allowed values", RuleEnum},
		{`{"req":1,"p":"` + secretValue + `"}`, "/p: expected a string matching the schema's pattern", RulePattern},
		{`{}`, "/req: expected a value (the property is required), got none", RuleRequired},
		{`{"req":1,"` + secretValue + `":1}`, "/: expected only the properties the schema allows", RuleAdditionalProperty},
		{`["` + secretValue + `"]`, "/: expected object, got array", RuleType},
		{`{"req":"` + secretValue, "/: expected one JSON object", RuleInvalidJSON},
	}
	c := &fakeCaller{res: okResult}
	tool := oneTool(t, schema, c, nil)
	for _, tt := range tests {
		t.Run(tt.explain, func(t *testing.T) {
			_, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			var ae *ArgumentError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.rule, ae.Rule)
			assert.Equal(t, tt.explain, ae.Explain())
			assert.NotContains(t, ae.Explain(), secretValue)
			assert.NotContains(t, err.Error(), secretValue)
			assert.Contains(t, err.Error(), tt.rule+": expected ", "the error's text says what was expected")
		})
	}
	assert.Empty(t, c.requests(), "nothing was sent")
}

// FuzzAdmitResult: any content, structuredContent and _meta a server sends
// to a tool with an output schema: the tool never panics, a refusal is a
// Protocol one with a known reason, and what it hands over is consistent.
func FuzzAdmitResult(f *testing.F) {
	f.Add([]byte(`[{"type":"text","text":"ok"}]`), []byte(`{"temperature":1}`), []byte(`{"k":1}`), false)
	f.Add([]byte(`[{"type":"image","data":"QUJD","mimeType":"image/png"}]`), []byte(`{"temperature":"x"}`), []byte(``), false)
	f.Add([]byte(`[{"type":"resource","resource":{"uri":"u","blob":"QQ=="}}]`), []byte(`[]`), []byte(`[]`), true)
	f.Add([]byte(`[{"type":"weird"}]`), []byte(`{`), []byte(`null`), false)
	it := ports.ToolItem{Name: "t", InputSchema: map[string]any{}}
	var out any
	if err := json.Unmarshal([]byte(outSchema), &out); err != nil {
		f.Fatal(err)
	}
	it.OutputSchema = out
	cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{it}}, nil, &Options{AdmissionCap: 40, MaxBinaryBytes: 16, ResultMetaKeys: []string{"k"}})
	tool := cat.Tools[0]
	known := map[string]bool{ReasonMalformedResult: true, ReasonUnknownContentType: true, ReasonBinaryTooLarge: true,
		ReasonStructuredContentInvalid: true, ReasonStructuredContentMissing: true}
	f.Fuzz(func(t *testing.T, content, structured, meta []byte, isError bool) {
		res, err := admit(tool, ports.CallResult{Content: content, StructuredContent: structured, Meta: meta, IsError: isError})
		if err != nil {
			require.Equal(t, refusal.Protocol, refusal.ClassOf(err), "%v", err)
			require.True(t, known[refusal.ReasonOf(err)], "%v", err)
			return
		}
		var items []json.RawMessage
		require.NoError(t, json.Unmarshal(res.Content, &items))
		require.Len(t, res.Blocks, len(items))
		for _, b := range res.Blocks {
			require.LessOrEqual(t, len(b.Data), 16)
		}
		if res.StructuredContent != nil {
			require.True(t, json.Valid(res.StructuredContent))
		}
	})
}

// FuzzUnquote: unquote decodes every valid JSON string literal exactly as
// encoding/json does.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u20AC"`, `"\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`,
		`"\udc00\ud800"`, "\"bad \xff utf8 \xc3\"", "\"\xed\xa0\x80\"", `"\ud83d\ud83d\ude00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		var want string
		if len(lit) < 2 || lit[0] != '"' || json.Unmarshal(lit, &want) != nil || stringEnd(lit, 0) != len(lit) {
			return
		}
		require.Equal(t, want, unquote(lit[1:len(lit)-1]))
	})
}

// FuzzOutputSchema: any outputSchema a server lists and any
// structuredContent it returns: the tool is always admitted (an unusable
// schema is a diagnostic, never a rejection), its Spec's OutputSchema is
// JSON, and a result is handed over or refused by name, never a panic.
func FuzzOutputSchema(f *testing.F) {
	f.Add([]byte(outSchema), []byte(`{"temperature":1}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"$ref":"#/x"}},"additionalProperties":false}`), []byte(`{"a":1,"b":2}`))
	f.Add([]byte(`{"type":"array"}`), []byte(`[1]`))
	f.Add([]byte(`{"type":"object","properties":{"p":{"pattern":"(("}}}`), []byte(`{"p":"x"}`))
	f.Add([]byte(`null`), []byte(``))
	f.Fuzz(func(t *testing.T, schema, structured []byte) {
		var out any
		if json.Unmarshal(schema, &out) != nil {
			return
		}
		it := ports.ToolItem{Name: "t", InputSchema: map[string]any{}, OutputSchema: out}
		cat := Build("srv", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{it}}, nil, nil)
		require.Len(t, cat.Tools, 1, "an output schema never rejects a tool")
		tool := cat.Tools[0]
		if o := tool.Spec().OutputSchema; o != nil {
			require.True(t, json.Valid(o))
		} else if out != nil {
			require.Contains(t, cat.Diagnostics, Diagnostic{Tool: "t", Reason: DiagOutputSchemaInvalid})
		}
		res, err := admit(tool, ports.CallResult{Content: okResult.Content, StructuredContent: structured})
		if err != nil {
			require.Equal(t, refusal.Protocol, refusal.ClassOf(err), "%v", err)
			return
		}
		if res.StructuredContent != nil {
			require.True(t, json.Valid(res.StructuredContent))
		}
	})
}
