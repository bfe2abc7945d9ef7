package mcpsession

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// callOutcome is what a Call returned, in a comparable form.
type callOutcome struct {
	ok                        bool
	isError                   bool
	content, structured, meta string
	nilStructured, nilMeta    bool
	class                     string
	reason                    string
}

func outcomeOf(res ports.CallResult, err error) callOutcome {
	if err != nil {
		re := refusalOf(err)
		if re == nil {
			return callOutcome{reason: "not a refusal: " + err.Error()}
		}
		return callOutcome{class: re.Class.String(), reason: re.Reason}
	}
	return callOutcome{ok: true, isError: res.IsError, content: string(res.Content),
		structured: string(res.StructuredContent), nilStructured: res.StructuredContent == nil,
		meta: string(res.Meta), nilMeta: res.Meta == nil}
}

// pathPair is two sessions to peers that answer every tools/call with
// the same reply: one on the SDK's path, one on the session's own.
type pathPair struct {
	reply    atomic.Pointer[[]byte]
	sdk, own ports.Session
}

func newPathPair(t testing.TB, version string) *pathPair {
	pp := &pathPair{}
	for _, sdk := range []bool{true, false} {
		p := &memPeer{version: version, handle: func(method string, _ json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
			if method != methodCallTool {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
			}
			return json.RawMessage(*pp.reply.Load()), nil
		}}
		c := New(fixedDialer(startMemPeer(t, p)), nil)
		c.sdkCalls = sdk
		s := connect(t, c, ports.Signals{})
		if sdk {
			pp.sdk = s
		} else {
			pp.own = s
			require.NotNil(t, s.(*session).raw)
		}
	}
	return pp
}

// both runs one call with reply on both sessions.
func (pp *pathPair) both(reply []byte) (sdk, own callOutcome) {
	pp.reply.Store(&reply)
	r := ports.CallRequest{Name: "x", Arguments: json.RawMessage(`{}`)}
	sdk = outcomeOf(pp.sdk.Call(context.Background(), r))
	own = outcomeOf(pp.own.Call(context.Background(), r))
	return sdk, own
}

// oracle is the SDK's path without a session: the SDK's decoding of the
// result, the checks Call makes on it, convertResult.
func oracle(raw []byte) callOutcome {
	res, err := decodeCallResult(raw)
	if err != nil {
		return callOutcome{reason: "decode"}
	}
	if res.NeedsInput() || res.InputRequests != nil {
		return callOutcome{reason: "input"}
	}
	out, err := convertResult(res)
	if err != nil {
		return callOutcome{reason: "convert"}
	}
	return outcomeOf(out, nil)
}

// checkRaw holds rawCallResult to the oracle: when it takes a result, it
// returns exactly what the SDK's path returns.
func checkRaw(t *testing.T, raw []byte) bool {
	t.Helper()
	out, ok := rawCallResult(raw)
	if !ok {
		return false
	}
	want := oracle(raw)
	if got := outcomeOf(out, nil); got != want {
		t.Fatalf("rawCallResult took %q\n got  %+v\n want %+v", raw, got, want)
	}
	return true
}

// hostileResults generates tools/call results: mostly the shapes ordinary
// servers write, with every way to step off them — block types and
// member orders, escapes encoding/json writes otherwise, invalid UTF-8,
// duplicate and unknown members, numbers a float64 cannot hold exactly,
// deep nesting, huge texts, protocol _meta keys.
type hostileResults struct{ r *rand.Rand }

func (h hostileResults) pick(xs ...string) string { return xs[h.r.IntN(len(xs))] }

func (h hostileResults) text() string {
	var b strings.Builder
	n := h.r.IntN(12)
	if h.r.IntN(50) == 0 {
		n = 1 << 16
	}
	for range n {
		switch h.r.IntN(14) {
		case 0:
			b.WriteString(h.pick(`\"`, `\\`, `\n`, `\t`, `\r`, `\b`, `\f`, `\/`))
		case 1:
			b.WriteString(h.pick(`\u003c`, `\u003e`, `\u0026`, `\u003C`, `\u0041`, `\u001f`, `\u0000`, `\u2028`, `\u2029`, `\ud83d\ude00`, `\ud800`, `\udc00x`, `\u00e9`))
		case 2:
			b.WriteString(h.pick("<", ">", "&", "é", "日本", "\u2028", "\u2029", "\x7f", "😀"))
		case 3:
			b.WriteString(h.pick("\xff", "\xc3", "\xed\xa0\x80", "\xe2\x80"))
		default:
			b.WriteByte(byte('a' + h.r.IntN(26)))
		}
	}
	return `"` + b.String() + `"`
}

func (h hostileResults) key() string {
	if h.r.IntN(6) == 0 {
		return h.text()
	}
	return `"` + h.pick("a", "b", "c", "k", "z", "A", "é", "a<", protocolMetaPrefix+"serverInfo", protocolMetaPrefix+"x", "progressToken") + `"`
}

func (h hostileResults) number() string {
	return h.pick("0", "1", "-1", "42", "-0", "0.5", "1.0", "1.25", "1e3", "1E3", "2.5e-7", "123456789012345", "1234567890123456",
		"12345678901234567890", "1e400", "-1e400", "0.1", "3.141592653589793", "100000000000000000000000")
}

func (h hostileResults) value(depth int) string {
	if depth > 3 && h.r.IntN(3) > 0 {
		return h.pick("1", `"s"`, "true", "null")
	}
	switch h.r.IntN(9) {
	case 0, 1:
		return h.object(depth+1, h.r.IntN(2) == 0)
	case 2:
		var parts []string
		for range h.r.IntN(4) {
			parts = append(parts, h.value(depth+1))
		}
		return "[" + strings.Join(parts, h.sep()) + "]"
	case 3:
		return h.text()
	case 4:
		return h.number()
	case 5:
		return h.pick("true", "false", "null")
	case 6:
		if h.r.IntN(10) == 0 {
			d := h.pick("70", "200", "1000")
			n := map[string]int{"70": 70, "200": 200, "1000": 1000}[d]
			return strings.Repeat("[", n) + strings.Repeat("]", n)
		}
		return `"plain"`
	}
	return h.number()
}

func (h hostileResults) sep() string {
	if h.r.IntN(12) == 0 {
		return " , "
	}
	return ","
}

// object writes an object; sorted asks for its keys in encoding/json's
// order (sometimes still with a duplicate).
func (h hostileResults) object(depth int, sorted bool) string {
	n := h.r.IntN(4)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = h.key()
	}
	if sorted {
		sortStrings(keys)
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+":"+h.value(depth))
	}
	return "{" + strings.Join(parts, h.sep()) + "}"
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func (h hostileResults) block() string {
	switch h.r.IntN(10) {
	case 0:
		return `{"text":` + h.text() + `,"type":"text"}`
	case 1:
		return `{"type":"text","text":` + h.text() + `,"_meta":{"a":1}}`
	case 2:
		return h.pick(`{"type":"image","data":"AAAA","mimeType":"image/png"}`, `{"type":"unknown-x"}`, `null`, `{"type":"text"}`,
			`{"type":"text","text":1}`, `{"type":"resource_link","uri":"x:y","name":"n"}`, `{"type":"text","text":"a","annotations":{"priority":1}}`, `{ "type":"text","text":"a"}`)
	}
	return `{"type":"text","text":` + h.text() + `}`
}

func (h hostileResults) result() string {
	var members []string
	if h.r.IntN(10) > 0 {
		var blocks []string
		for range h.r.IntN(4) {
			blocks = append(blocks, h.block())
		}
		members = append(members, `"content":[`+strings.Join(blocks, h.sep())+`]`)
	}
	if h.r.IntN(3) == 0 {
		members = append(members, `"isError":`+h.pick("true", "false", "null", `"true"`, "1"))
	}
	if h.r.IntN(3) == 0 {
		members = append(members, `"structuredContent":`+h.value(0))
	}
	if h.r.IntN(2) == 0 {
		meta := h.object(1, h.r.IntN(3) > 0)
		if h.r.IntN(3) == 0 {
			meta = `{"` + protocolMetaPrefix + `serverInfo":{"name":"s","version":"1","title":` + h.text() + `}}`
		}
		members = append(members, `"_meta":`+h.pick(meta, meta, meta, "null", "[]", "{}"))
	}
	if h.r.IntN(4) == 0 {
		members = append(members, `"resultType":`+h.pick(`"complete"`, `"complete"`, `"input_required"`, `"other"`, "1", "null"))
	}
	if h.r.IntN(10) == 0 {
		members = append(members, h.pick(`"Content":[]`, `"extra":1`, `"content":[]`, `"inputRequests":{}`, `"requestState":"s"`, `"isError":true`))
	}
	h.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	out := "{" + strings.Join(members, h.sep()) + "}"
	if h.r.IntN(15) == 0 {
		out = h.pick("null", "[]", `"x"`, "1", " "+out+"\n")
	}
	return out
}

// TestRawCallResultAgrees is the property: for every generated result,
// the session's own path and the SDK's return the same CallResult, byte
// for byte, or both refuse it with the same Class and Reason; and what
// rawCallResult takes is exactly what the SDK's decoding and
// convertResult make of it. Both eras.
func TestRawCallResultAgrees(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	for _, version := range []string{"2025-11-25", ModernProtocolVersion} {
		t.Run(version, func(t *testing.T) {
			pp := newPathPair(t, version)
			h := hostileResults{rand.New(rand.NewPCG(7, uint64(len(t.Name()))+uint64(version[3])))}
			taken := 0
			for range n {
				raw := h.result()
				if !json.Valid([]byte(raw)) {
					continue
				}
				if checkRaw(t, []byte(raw)) {
					taken++
				}
				sdk, own := pp.both([]byte(raw))
				if sdk != own {
					t.Fatalf("the paths differ on %q\n sdk %+v\n own %+v", raw, sdk, own)
				}
			}
			t.Logf("%d results, %d taken by rawCallResult", n, taken)
			require.Greater(t, taken, n/20, "the generator reaches the fast path")
		})
	}
}

// TestRawCallResultShapes pins what the fast path takes, and that the
// parts it returns cannot be appended into each other.
func TestRawCallResultShapes(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		taken bool
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, true},
		{`{"content":[]}`, true},
		{`{"content":[{"type":"text","text":"a\"b\\c\n\u003c\u0000é"}],"isError":true}`, true},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"version":"1","name":"s"}},"content":[{"type":"text","text":"x"}],"resultType":"complete"}`, true},
		{`{"content":[],"_meta":{"a":1,"io.modelcontextprotocol/x":{"z":1,"a":[1.5]},"b":[true,null]}}`, true},
		{`{"content":[],"structuredContent":{"a":[1,{"b":"c"}],"z":null}}`, true},
		{`{"content":[],"structuredContent":null,"_meta":null}`, true},
		{` {"content" : [] } `, true},
		{`{"content":[{"type":"text","text":"<"}]}`, false},
		{`{"content":[{"type":"text","text":"\/"}]}`, false},
		{`{"content":[{"text":"a","type":"text"}]}`, false},
		{`{"content":[],"structuredContent":{"b":1,"a":2}}`, false},
		{`{"content":[],"structuredContent":{"a":1,"a":2}}`, false},
		{`{"content":[],"structuredContent":1.5}`, false},
		{`{"content":[],"resultType":"input_required"}`, false},
		{`{"content":[],"content":[]}`, false},
		{`{"Content":[]}`, false},
		{`{}`, false},
		{`null`, false},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			require.Equal(t, tc.taken, checkRaw(t, []byte(tc.raw)))
		})
	}
	out, ok := rawCallResult([]byte(`{"content":[],"structuredContent":{"a":1},"_meta":{"k":"v"}}`))
	require.True(t, ok)
	require.Equal(t, len(out.Content), cap(out.Content))
	require.Equal(t, len(out.StructuredContent), cap(out.StructuredContent))
	require.Equal(t, len(out.Meta), cap(out.Meta))
}

// FuzzRawCallResult: whatever the bytes, the session's own path returns
// what the SDK's returns (same result, or the same refusal), and what
// rawCallResult takes is what the SDK's decoding and convertResult make.
func FuzzRawCallResult(f *testing.F) {
	h := hostileResults{rand.New(rand.NewPCG(1, 2))}
	for range 40 {
		f.Add([]byte(h.result()))
	}
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[],"_meta":{"a":1,"io.modelcontextprotocol/x":1}}`,
		`{"content":[],"structuredContent":{"a":[1,{"b":"c"}]}}`,
		`{"content":[],"inputRequests":{"a":null}}`,
	} {
		f.Add([]byte(s))
	}
	pp := newPathPair(f, "2025-11-25")
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			t.Skip("the peer cannot send invalid JSON")
		}
		checkRaw(t, data)
		sdk, own := pp.both(data)
		if sdk != own {
			t.Fatalf("the paths differ on %q\n sdk %+v\n own %+v", data, sdk, own)
		}
	})
}

var _ = fmt.Sprint
