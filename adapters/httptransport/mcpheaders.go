package httptransport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/jsontext"
)

// The protocol headers, as the go-sdk (v1.8.0, mcp/streamable_headers.go)
// writes them.
const (
	hdrProtocolVersion = "Mcp-Protocol-Version"
	hdrSessionID       = "Mcp-Session-Id"
	hdrLastEventID     = "Last-Event-Id"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	hdrParamPrefix     = "Mcp-Param-"
	// modernVersion is the first protocol version of the stateless era,
	// and the first whose requests carry Mcp-Method, Mcp-Name and
	// Mcp-Param-* (the SDK's minVersionForStandardHeaders).
	modernVersion = "2026-07-28"
	// metaProtocolVersion is the _meta key under which a modern-era
	// request names its protocol version (mcp.MetaKeyProtocolVersion).
	metaProtocolVersion = mcp.MetaKeyProtocolVersion
)

type toolKey struct{}

// WithTool returns ctx carrying tool, the tool a tools/call made under ctx
// calls: on a connection of protocol 2026-07-28 or later, the call then
// carries an Mcp-Param-<name> header for each argument the tool's input
// schema annotates with x-mcp-header (the go-sdk's rules: a string,
// boolean or safe integer argument, the value base64-wrapped as
// "=?base64?…?=" when it is not plain visible ASCII). It is what the
// go-sdk's own client does with the tool it has listed, through a context
// key an outside transport cannot read. A nil tool leaves ctx unchanged.
//
// What the headers need from tool's schema is derived at its first call
// and kept while tool is reachable, so tool must not be changed after it
// is first passed here (a re-listed tool is a new *mcp.Tool). Safe for
// concurrent use.
func WithTool(ctx context.Context, tool *mcp.Tool) context.Context {
	if tool == nil {
		return ctx
	}
	return context.WithValue(ctx, toolKey{}, tool)
}

// metaVersion returns the string _meta[io.modelcontextprotocol/protocolVersion]
// of a request's params, or "", scanning params rather than decoding them.
func metaVersion(params []byte) string {
	meta, ok := member(params, "_meta")
	if !ok {
		return ""
	}
	v, ok := member(meta, metaProtocolVersion)
	if !ok || len(v) == 0 || v[0] != '"' {
		return ""
	}
	return unquote(v)
}

// unquote returns the JSON string v unescaped ("" when it is not one).
func unquote(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 && len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return string(v[1 : len(v)-1])
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// member returns the raw value of the last top-level member name of the
// JSON object data (names matched exactly once unescaped, as the SDK's
// decoder does), or false when data is not an object that has it.
func member(data []byte, name string) ([]byte, bool) {
	v, found, _ := objectMember(data, name)
	return v, found
}

// objectMember is member, and also reports whether data is a whole JSON
// object (as far as skipping its values tells).
func objectMember(data []byte, name string) (val []byte, found, obj bool) {
	i := jsontext.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false, false
	}
	i++
	for {
		i = jsontext.SkipSpace(data, i)
		if i >= len(data) {
			return nil, false, false
		}
		switch data[i] {
		case '}':
			return val, found, true
		case ',':
			i++
			continue
		case '"':
		default:
			return nil, false, false
		}
		kend := jsontext.SkipString(data, i)
		if kend < 0 {
			return nil, false, false
		}
		key := data[i:kend]
		i = jsontext.SkipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return nil, false, false
		}
		i = jsontext.SkipSpace(data, i+1)
		vend := jsontext.SkipValue(data, i)
		if vend < 0 {
			return nil, false, false
		}
		if keyIs(key, name) {
			val, found = data[i:vend], true
		}
		i = vend
	}
}

// setStandardHeaders sets Mcp-Method, Mcp-Name and Mcp-Param-* for a
// request when version is 2026-07-28 or later, as the go-sdk does.
func setStandardHeaders(ctx context.Context, h http.Header, version string, req *jsonrpc.Request) {
	if version == "" || version < modernVersion || req == nil {
		return
	}
	h[hdrMethod] = []string{req.Method}
	if name, ok := extractName(req.Method, req.Params); ok {
		h[hdrName] = []string{name}
	}
	if req.Method == "tools/call" {
		if tool, _ := ctx.Value(toolKey{}).(*mcp.Tool); tool != nil {
			for k, v := range paramHeaders(tool, req.Params) {
				h[k] = []string{v}
			}
		}
	}
}

// extractName returns the name a request of method names (tools/call and
// prompts/get: params.name; resources/read: params.uri), and false when
// method has none or params is not an object whose member is a string.
func extractName(method string, params []byte) (string, bool) {
	var key string
	switch method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	default:
		return "", false
	}
	if bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		return "", true
	}
	v, found, obj := objectMember(params, key)
	if !obj {
		return "", false
	}
	if !found {
		return "", true
	}
	if string(v) == "null" {
		return "", true
	}
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// headerBinding is one x-mcp-header annotation: the argument at path goes
// to the header Mcp-Param-<header>.
type headerBinding struct {
	path   []string
	header string
}

// schemaProp is the part of a JSON Schema property paramHeaders reads.
type schemaProp struct {
	XMCPHeader json.RawMessage       `json:"x-mcp-header,omitempty"`
	Properties map[string]schemaProp `json:"properties,omitempty"`
}

// bindings returns the x-mcp-header annotations of tool's input schema.
func bindings(tool *mcp.Tool) []headerBinding {
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return nil
	}
	var s schemaProp
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return collectBindings(s.Properties, nil, nil)
}

// toolBindings holds the bindings of each tool a tools/call was made
// with (weak.Pointer[mcp.Tool] to []headerBinding, nil when it has none),
// so that a call derives them from the schema only once per tool. An
// entry is deleted once its tool is collected: the map holds no more
// entries than there are reachable tools that were called.
var toolBindings sync.Map

// cachedBindings returns bindings(tool), derived at most once per tool
// (twice at worst when two first calls race, with the same result).
func cachedBindings(tool *mcp.Tool) []headerBinding {
	k := weak.Make(tool)
	if v, ok := toolBindings.Load(k); ok {
		return v.([]headerBinding)
	}
	bs := bindings(tool)
	if _, loaded := toolBindings.LoadOrStore(k, bs); !loaded {
		runtime.AddCleanup(tool, func(k weak.Pointer[mcp.Tool]) { toolBindings.Delete(k) }, k)
	}
	return bs
}

func collectBindings(props map[string]schemaProp, prefix []string, out []headerBinding) []headerBinding {
	for name, p := range props {
		path := append(append(make([]string, 0, len(prefix)+1), prefix...), name)
		var h string
		if json.Unmarshal(p.XMCPHeader, &h) == nil && h != "" {
			out = append(out, headerBinding{path: path, header: h})
		}
		if len(p.Properties) > 0 {
			out = collectBindings(p.Properties, path, out)
		}
	}
	return out
}

// paramHeaders returns the Mcp-Param-* headers of a tools/call of tool
// with params, by the go-sdk's rules (generateParamHeaders).
func paramHeaders(tool *mcp.Tool, params []byte) map[string]string {
	return bindingHeaders(cachedBindings(tool), params)
}

// bindingHeaders returns the Mcp-Param-* headers of a tools/call with
// params of a tool whose annotations are bs.
func bindingHeaders(bs []headerBinding, params []byte) map[string]string {
	if len(bs) == 0 {
		return nil
	}
	var raw struct {
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(params, &raw) != nil || raw.Arguments == nil {
		return nil
	}
	res := make(map[string]string, len(bs))
	for _, b := range bs {
		arg, ok := lookupArg(raw.Arguments, b.path)
		if !ok || string(arg) == "null" {
			continue
		}
		s, ok := primitiveString(arg)
		if !ok {
			continue
		}
		res[hdrParamPrefix+b.header] = encodeHeaderValue(s)
	}
	return res
}

func lookupArg(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	if !ok {
		return nil, false
	}
	for _, part := range path[1:] {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		if cur, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// primitiveString returns the header text of a string, boolean or safe
// integer JSON value, and false for anything else.
func primitiveString(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		const maxSafe = 1<<53 - 1
		if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) || v < -maxSafe || v > maxSafe {
			return "", false
		}
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// encodeHeaderValue wraps s in base64 when a header cannot carry it as
// is: leading or trailing space or tab, a byte outside visible ASCII and
// space, or a value that would read as wrapped.
func encodeHeaderValue(s string) string {
	if needsBase64(s) {
		return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
	}
	return s
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for _, c := range s {
		if c < 0x20 || c > 0x7E {
			return true
		}
	}
	return strings.HasPrefix(s, b64Prefix) && strings.HasSuffix(s, b64Suffix)
}
