package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// The stdio fast path (fastcall.go) is proven by difference: the same
// request sequences go to a Server with it and to one without it (every
// message to the go-sdk server), and the answers must be the same bytes.
// Answers are compared per segment: the lines that arrive between one
// request and its answer (or a ping that follows a notification), sorted,
// since inside a segment they answer requests that run concurrently.

// diffBackend is the Backend of the differential tests: tools whose
// results show what the handler was given.
func diffBackend(running chan<- struct{}) *fakeBackend {
	tools := []Tool{{Name: "echo", InputSchema: objSchema}, {Name: "slow", InputSchema: objSchema},
		{Name: "fail", InputSchema: objSchema}, {Name: "struct", InputSchema: objSchema},
		{Name: "prog", InputSchema: objSchema}, {Name: "trunc", InputSchema: objSchema},
		{Name: "café", InputSchema: objSchema}, {Name: "bell\a", InputSchema: objSchema},
		{Name: "img", InputSchema: objSchema}, {Name: "ask", InputSchema: objSchema}}
	b := newFake(Catalog{Tools: tools})
	b.call = func(ctx context.Context, name string, args json.RawMessage) (ports.ToolResult, error) {
		text, _ := json.Marshal(name + " " + string(args))
		block := json.RawMessage(`[{"type":"text","text":` + string(text) + `}]`)
		switch name {
		case "slow":
			running <- struct{}{}
			if p := ports.ProgressFunc(ctx); p != nil {
				p(ports.Progress{Progress: 1, Total: 2, Message: "half"})
			}
			<-ctx.Done()
			return ports.ToolResult{}, ctx.Err()
		case "fail":
			return ports.ToolResult{}, fmt.Errorf("boom <&> %s", args)
		case "struct":
			return ports.ToolResult{Content: block, StructuredContent: json.RawMessage(`{"a":[1,2.50,"<x>"]}`)}, nil
		case "prog":
			if p := ports.ProgressFunc(ctx); p != nil {
				p(ports.Progress{Progress: 1, Total: 3})
				p(ports.Progress{Progress: 2, Total: 3, Message: "two"})
			}
		case "trunc":
			return ports.ToolResult{Content: block, Truncated: true, IsError: true}, nil
		case "ask":
			// A server that asks once (a legacy client's round, put to it
			// on its session; a modern client's, handed on).
			round := ports.InputRoundOf(ctx)
			if round != nil && round.Responses == nil {
				round.Requests = map[string]ports.InputRequest{"q": {Kind: ports.InputElicit,
					Elicit: &ports.ElicitRequest{ServerID: "s", Mode: ports.ElicitForm, Message: "why?"}}}
				round.NextState = "st"
				return ports.ToolResult{}, nil
			}
			if round != nil {
				text, _ := json.Marshal(fmt.Sprint(round.State, " ", round.Responses["q"].Elicit))
				block = json.RawMessage(`[{"type":"text","text":` + string(text) + `}]`)
			}
		case "img":
			return ports.ToolResult{Content: json.RawMessage(`[{"type":"image","data":"aGk=","mimeType":"image/png","_meta":{"k":1}},{"type":"text","text":"t","annotations":{"priority":0.5}}]`)}, nil
		}
		return ports.ToolResult{Content: block}, nil
	}
	return b
}

var sealedStateRe = regexp.MustCompile(`"requestState":"[^"]*"`)

// step is one line a client sends and what ends its segment.
type step struct {
	line string
	// await is the id (as JSON) whose answer ends the segment; "" means a
	// ping is sent after the line and its answer ends it.
	await string
	// progress, when set, ends the segment at a progress notification of
	// this token (as JSON).
	progress string
	// slow: the segment does not end before the call's handler runs (a
	// cancel sent before it would race the dispatch, whoever dispatches).
	slow bool
}

// genSteps is a random session: initialize (or not), notifications,
// calls of offered and unknown tools with every shape of params, calls
// that run until cancelled, cancels, reused ids, lists and pings.
func genSteps(r *rand.Rand, n int) []step {
	var steps []step
	id := 0
	nextID := func() string {
		id++
		if r.Intn(4) == 0 {
			return fmt.Sprintf(`"s%d"`, id)
		}
		return fmt.Sprint(id)
	}
	var slow []string // ids of calls of "slow" running
	versions := []string{"2024-11-05", "2025-06-18", "2025-11-25", "2025-11-25", "2026-07-28"}
	caps := []string{`{}`, `{"elicitation":{}}`, `{"roots":{}}`}
	names := []string{`"echo"`, `"ask"`, `"fail"`, `"struct"`, `"prog"`, `"trunc"`, `"café"`, `"img"`, `"ask"`,
		`"nope"`, `"\u0065cho"`, `""`, `"bell\\a"`, `"bell\u0007"`, `7`, `null`}
	argss := []string{``, `{}`, `{"x":"a"}`, ` { "x" : [1, 2 ,{"y":null}] , "z":"<&>\u00e9\n" } `, `5`, `null`, `"s"`, `[]`,
		`{"x":1e400}`, strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300)}
	metas := []string{``, ``, ``, `"_meta":{"progressToken":7}`, `"_meta":{"progressToken":"t"}`, `"_meta":{}`,
		`"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":7}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`,
		`"extra":1`, `"name":"echo"`, `"requestState":"x"`, `"Name":"fail"`}
	// A modern client's _meta on each request: mostly one of a few it
	// repeats (as a client does), some the SDK refuses.
	modernMetas := []string{
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		`"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":7}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"pt"}`,
	}
	modern := r.Intn(3) == 0 // the session's requests carry the modern _meta
	call := func(name string) string {
		if r.Intn(2) == 0 {
			// A plain call, as most clients send one.
			m := ``
			if modern {
				m = `,` + modernMetas[min(r.Intn(len(modernMetas)+4), r.Intn(3))]
			}
			return `,"params":{"name":` + names[r.Intn(9)] + `,"arguments":` + argss[1+r.Intn(3)] + m + `}`
		}
		var members []string
		if name != "" {
			members = append(members, `"name":`+name)
		}
		if a := argss[r.Intn(len(argss))]; a != `` {
			members = append(members, `"arguments":`+a)
		}
		if m := metas[r.Intn(len(metas))]; m != `` {
			members = append(members, m)
		}
		r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		switch r.Intn(20) {
		case 0:
			return ``
		case 1:
			return `,"params":null`
		case 2:
			return `,"params":[]`
		}
		return `,"params":{` + strings.Join(members, ",") + `}`
	}
	initialized := r.Intn(5) != 0
	if modern && r.Intn(2) == 0 {
		// A stateless client: its first request's _meta is the session's.
		initialized = true
		i := nextID()
		steps = append(steps, step{line: `{"jsonrpc":"2.0","id":` + i + `,"method":"tools/call","params":{"name":"echo",` + modernMetas[r.Intn(2)] + `}}`, await: i})
	} else if initialized {
		i := nextID()
		v := versions[r.Intn(len(versions))]
		if modern {
			v = "2026-07-28"
		}
		steps = append(steps, step{line: `{"jsonrpc":"2.0","id":` + i + `,"method":"initialize","params":{"protocolVersion":"` +
			v + `","capabilities":` + caps[r.Intn(len(caps))] + `,"clientInfo":{"name":"c","version":"1"}}}`, await: i})
		if r.Intn(6) != 0 {
			steps = append(steps, step{line: `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`})
		}
	}
	for len(steps) < n {
		switch k := r.Intn(15); {
		case k < 7:
			i := nextID()
			steps = append(steps, step{line: `{"jsonrpc":"2.0","id":` + i + `,"method":"tools/call"` + call(names[r.Intn(len(names))]) + `}`, await: i})
		case k == 7 && initialized:
			// (A call before initialize is answered at once.)
			i := nextID()
			meta, tok := ``, ``
			if r.Intn(2) == 0 {
				tok = `"p` + strings.Trim(i, `"`) + `"`
				meta = `,"_meta":{"progressToken":` + tok + `}`
			}
			steps = append(steps, step{line: `{"jsonrpc":"2.0","id":` + i + `,"method":"tools/call","params":{"name":"slow","arguments":{}` + meta + `}}`, progress: tok, slow: true})
			slow = append(slow, i)
		case k == 8 && len(slow) > 0:
			j := r.Intn(len(slow))
			steps = append(steps, step{line: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + slow[j] + `,"reason":"r"}}`, await: slow[j]})
			slow = slices.Delete(slow, j, j+1)
		case k == 9 && len(slow) > 0:
			steps = append(steps, step{line: `{"jsonrpc":"2.0","id":` + slow[r.Intn(len(slow))] + `,"method":"tools/call","params":{"name":"echo"}}`})
		case k == 10:
			i := nextID()
			steps = append(steps, step{line: `{"jsonrpc":"2.0","id":` + i + `,"method":"tools/list"}`, await: i})
		case k == 11:
			steps = append(steps, step{line: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`})
		case k == 12:
			steps = append(steps, step{line: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + nextID() + `}}`})
		case k == 14 && len(slow) > 0:
			// Not a cancel the SDK reads (its keys match exactly): the
			// call runs on.
			key := []string{`"RequestId"`, `"requestID"`, `"request_id"`}[r.Intn(3)]
			steps = append(steps, step{line: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{` + key + `:` + slow[r.Intn(len(slow))] + `}}`})
		case k == 13 && !initialized:
			i := nextID()
			steps = append(steps, step{line: `{"jsonrpc":"2.0","id":` + i + `,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, await: i})
			initialized = true
		}
	}
	// Every call still running is cancelled, so that its answer is part
	// of the transcript.
	for _, i := range slow {
		steps = append(steps, step{line: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + i + `}}`, await: i})
	}
	return steps
}

// transcript runs steps against a Server of diffBackend, with the fast
// path or without, over stdio, and returns its answers by segment.
func transcript(t testing.TB, steps []step, fast bool) ([]string, int64) {
	var (
		obsMu sync.Mutex
		obs   []string // what the Observer and Ready were told
	)
	running := make(chan struct{}, 1024)
	s := New(diffBackend(running), &Options{
		Observer: func(ctx context.Context, r Request) (context.Context, func(Outcome)) {
			return ctx, func(o Outcome) {
				obsMu.Lock()
				defer obsMu.Unlock()
				obs = append(obs, fmt.Sprintf("observed %q %q %q err=%v toolError=%v version=%q", r.Method, r.Target, r.Traceparent, o.Err, o.ToolError, o.ProtocolVersion))
			}
		},
		Ready: func(context.Context) {
			obsMu.Lock()
			defer obsMu.Unlock()
			obs = append(obs, "ready")
		},
	})
	defer s.Close()
	s.noFast = !fast
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(ctx, inR, outW); _ = outW.Close() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	idOf := func(line string) (string, bool) {
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			return "", false
		}
		switch {
		case m.Method == "notifications/progress":
			return "progress:" + string(m.Params.Token), true
		case m.Method != "":
			return "", false
		case m.ID == nil:
			return "null", true
		}
		return string(*m.ID), true
	}
	var out []string
	lastState := ""
	readUntil := func(want string) {
		var seg []string
		timeout := time.After(5 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if ok && strings.Contains(l, `"method":"elicitation/create"`) {
					// The client answers the server's question.
					var m struct{ ID json.RawMessage }
					_ = json.Unmarshal([]byte(l), &m)
					_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"action":"accept","content":{"a":"b"}}}`+"\n")
				}
				// A sealed requestState holds a time and a random nonce:
				// it differs from run to run whatever serves the call. A
				// step may send the last one back ({{state}}).
				if m := sealedStateRe.FindString(l); m != "" {
					lastState = strings.TrimSuffix(strings.TrimPrefix(m, `"requestState":"`), `"`)
				}
				l = sealedStateRe.ReplaceAllString(l, `"requestState":"<sealed>"`)
				if !ok {
					seg = append(seg, "<eof>")
					slices.Sort(seg)
					out = append(out, strings.Join(seg, "\n"))
					return
				}
				seg = append(seg, l)
				if id, ok := idOf(l); ok && id == want {
					slices.Sort(seg)
					out = append(out, strings.Join(seg, "\n"))
					return
				}
			case <-timeout:
				seg = append(seg, "<timeout waiting for "+want+">")
				slices.Sort(seg)
				out = append(out, strings.Join(seg, "\n"))
				return
			}
		}
	}
	write := func(l string) bool {
		l = strings.ReplaceAll(l, "{{state}}", lastState)
		_, err := io.WriteString(inW, l+"\n")
		return err == nil
	}
	for n, st := range steps {
		if !write(st.line) {
			break
		}
		if st.slow {
			select {
			case <-running:
			case <-time.After(5 * time.Second):
				out = append(out, "<timeout waiting for the handler>")
			}
		}
		switch {
		case st.await != "":
			readUntil(st.await)
		case st.progress != "":
			readUntil("progress:" + st.progress)
		default:
			ping := fmt.Sprintf(`"sync%d"`, n)
			if !write(`{"jsonrpc":"2.0","id":` + ping + `,"method":"ping"}`) {
				break
			}
			readUntil(ping)
		}
	}
	_ = inW.Close()
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	slices.Sort(rest)
	out = append(out, strings.Join(rest, "\n"))
	if err := <-served; err != nil {
		out = append(out, "served: "+err.Error())
	}
	obsMu.Lock()
	slices.Sort(obs)
	out = append(out, obs...)
	obsMu.Unlock()
	return out, s.fastTaken.Load()
}

// TestFastCallSameAnswers: over generated sessions (initialized in each
// era or not, calls of offered, unknown and escaped names, every shape of
// params, _meta of both eras valid and not, progress tokens, calls running
// until cancelled, cancels, reused ids, notifications with the call's
// method), a Server with the stdio fast path answers the same bytes as
// one without it; and the fast path took calls.
func TestFastCallSameAnswers(t *testing.T) {
	var taken int64
	for seed := int64(1); seed <= 80; seed++ {
		steps := genSteps(rand.New(rand.NewSource(seed)), 24)
		want, none := transcript(t, steps, false)
		got, n := transcript(t, steps, true)
		require.Zero(t, none)
		taken += n
		if !assert.Equal(t, want, got, "seed %d", seed) {
			for _, st := range steps {
				t.Log(st.line)
			}
			t.FailNow()
		}
	}
	assert.Greater(t, taken, int64(100), "the fast path took too few calls to prove anything")
}

// FuzzFastCallParams: whatever the params of a tools/call of an
// initialized legacy session, the fast path answers what the SDK does.
func FuzzFastCallParams(f *testing.F) {
	for _, p := range []string{`{"name":"echo"}`, `{"name":"echo","arguments":{"x":1}}`, `{"arguments":{},"name":"café"}`,
		`{"name":"echo","name":"fail"}`, `{"name":"e\u0063ho"}`, `{"name":"echo","arguments":{"a":"\ud800"}}`,
		`{"name":"echo","arguments":{"a":"` + "\xff" + `"}}`, `{ "name" : "fail" , "arguments" : { } }`, `{"name":"echo","arguments":[]}`,
		`{"name":"nope"}`, `{"NAME":"echo"}`, `7`, `null`} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, params string) {
		if strings.ContainsAny(params, "\n\r") || !json.Valid([]byte(params)) {
			return // a line that is not JSON never reaches the fast path (nor is answered)
		}
		steps := []step{
			{line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, await: "1"},
			{line: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + params + `}`, await: "2"},
			{line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`, await: "3"},
		}
		want, _ := transcript(t, steps, false)
		got, _ := transcript(t, steps, true)
		require.Equal(t, want, got)
	})
}

// TestParseCall: what the fast path takes of a call's params, and what
// it leaves to the SDK.
func TestParseCall(t *testing.T) {
	for _, tc := range []struct {
		params, name, args string
		ok                 bool
		meta               string
	}{
		{`{"name":"echo"}`, "echo", "", true, ""},
		{` { "arguments" : { "a" : [1,{"}":"{"}] } , "name" : "café" } `, "café", `{ "a" : [1,{"}":"{"}] }`, true, ""},
		{`{"_meta":{"a":{"b":[]}},"name":"echo"}`, "echo", "", true, `{"a":{"b":[]}}`},
		{`{"_meta":{"a":"\u0065"},"name":"echo"}`, "", "", false, ""},
		{`{"_meta":{},"_meta":{},"name":"echo"}`, "", "", false, ""},
		{`{"_meta":[],"name":"echo"}`, "", "", false, ""},
		{`{"name":"e\u0063ho"}`, "", "", false, ""},
		{`{"name":"echo","name":"echo"}`, "", "", false, ""},
		{`{"name":"echo","arguments":{},"arguments":{}}`, "", "", false, ""},
		{`{"name":"echo","arguments":[]}`, "", "", false, ""},
		{`{"name":"echo","arguments":null}`, "", "", false, ""},
		{`{"arguments":{}}`, "", "", false, ""},
		{`{"na\u006de":"echo"}`, "", "", false, ""},
		{`{"name":"echo"`, "", "", false, ""},
		{`{"name":"` + "\xff" + `"}`, "", "", false, ""},
		{`{"name":"echo","arguments":` + strings.Repeat(`[`, 300) + strings.Repeat(`]`, 300) + `}`, "", "", false, ""},
		{`[]`, "", "", false, ""},
		{``, "", "", false, ""},
	} {
		name, args, meta, ok := parseCall([]byte(tc.params))
		assert.Equal(t, tc.ok, ok, tc.params)
		assert.Equal(t, tc.meta, string(meta), tc.params)
		assert.Equal(t, tc.name, name, tc.params)
		assert.Equal(t, tc.args, string(args), tc.params)
	}
}

// TestFastCallTakesLegacyCalls: the fast path itself serves a legacy
// client's plain calls, a call whose server asks (the question put to the
// client on its session, the answer handed back), a call cancelled by its
// id, and a reused id (dropped, as the SDK drops one); the answers are
// the SDK's (TestFastCallSameAnswers) and these show the fast path took
// them.
func TestFastCallTakesLegacyCalls(t *testing.T) {
	steps := []step{
		{line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`, await: "1"},
		{line: `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`},
		{line: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"<a>"}}}`, await: "2"},
		{line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{}}}`, await: "3"},
		{line: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, slow: true},
		{line: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`},
		{line: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`, await: "4"},
		{line: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`, await: "5"},
	}
	got, taken := transcript(t, steps, true)
	want, _ := transcript(t, steps, false)
	require.Equal(t, want, got)
	assert.Equal(t, int64(3), taken, "echo, ask and slow are taken; the reused id is dropped; nope is the SDK's")
	all := strings.Join(got, "\n")
	assert.Contains(t, all, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"echo {\"x\":\"\u003ca\u003e\"}"}]}}`)
	assert.Contains(t, all, `"method":"elicitation/create"`)
	assert.Contains(t, all, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"st \u0026{accept map[a:b]}"}]}}`)
	assert.Contains(t, all, `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"context canceled"}],"isError":true}}`)
	assert.Contains(t, all, `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"unknown tool \"nope\""}}`)
	assert.Equal(t, 1, strings.Count(all, `"id":4,`), "the reused id is not answered")
	assert.Contains(t, all, `observed "tools/call" "echo" "" err=<nil> toolError=false version=""`)
}

// TestFastCallTakesModernCalls: a 2026-07-28 client's calls whose _meta
// the SDK accepted before on the connection are the fast path's: a plain
// call, a call whose server asks (handed to an eliciting client in an
// input-required result, whose retry with the answer, a requestState
// call, is the SDK's and resumes it), a call cancelled, a client that does
// not elicit (its server's question refused); a _meta the SDK refused
// stays the SDK's.
func TestFastCallTakesModernCalls(t *testing.T) {
	const (
		meta   = `"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`
		plain  = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		refuse = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":7}`
	)
	for _, tc := range []struct {
		name  string
		steps []step
		taken int64
		shows string
	}{
		{"stateless, eliciting", []step{
			{line: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}`, await: "1"},
			{line: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"struct","arguments":{"a":1},` + meta + `}}`, await: "2"},
			{line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{},` + meta + `}}`, await: "3"},
			{line: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{},"requestState":"{{state}}","inputResponses":{"elicitation":{"action":"accept","content":{"a":"b"}}},` + meta + `}}`, await: "4"},
			{line: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ask","arguments":{},` + meta + `}}`, await: "8"},
			{line: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow",` + meta + `}}`, slow: true},
			{line: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`, await: "5"},
			{line: `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"img",` + refuse + `}}`, await: "6"},
			{line: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"img",` + refuse + `}}`, await: "7"},
		}, 4, `"resultType":"input_required"`}, // 2, 3, 8 and 5; 1 taught the connection its _meta
		{"initialized, not eliciting", []step{
			{line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, await: "1"},
			{line: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo",` + plain + `}}`, await: "2"},
			{line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trunc",` + plain + `}}`, await: "3"},
			{line: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{},` + plain + `}}`, await: "4"},
			{line: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{},"requestState":"{{state}}","inputResponses":{"q":{"action":"decline"}},` + plain + `}}`, await: "5"},
		}, 2, `(input_unavailable)`}, // 3 and 4; 2 taught the connection its _meta
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, taken := transcript(t, tc.steps, true)
			want, _ := transcript(t, tc.steps, false)
			require.Equal(t, want, got)
			assert.Equal(t, tc.taken, taken)
			all := strings.Join(got, "\n")
			assert.Contains(t, all, `"resultType":"complete"`)
			assert.Contains(t, all, tc.shows)
			assert.Contains(t, all, `"io.modelcontextprotocol/serverInfo":{"name":"mcpward","version":"dev"}`)
			assert.NotContains(t, all, "<timeout")
		})
	}
}

// FuzzFastCallMeta: whatever _meta a client sends twice (the SDK checks
// the first, the fast path may take the second), the answers are the
// SDK's, in a stateless session or after an initialize of either era.
func FuzzFastCallMeta(f *testing.F) {
	for _, m := range []string{`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":"t"}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"NAME":5}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"Elicitation":7}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-29","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":7}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":5,"x":[1e400]}`,
		`{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{}`, `{"traceparent":"t"}`} {
		f.Add(m, uint8(0))
		f.Add(m, uint8(1))
	}
	f.Fuzz(func(t *testing.T, meta string, start uint8) {
		if strings.ContainsAny(meta, "\n\r") || !json.Valid([]byte(meta)) {
			return // a line that is not JSON never reaches the fast path (nor is answered)
		}
		var steps []step
		switch start % 3 {
		case 1:
			steps = append(steps, step{line: `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`, await: `"i"`})
		case 2:
			steps = append(steps, step{line: `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, await: `"i"`})
		}
		for i := 1; i <= 3; i++ {
			name := []string{"echo", "ask", "img"}[i-1]
			steps = append(steps, step{line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":%s}}`, i, name, meta), await: fmt.Sprint(i)})
		}
		want, _ := transcript(t, steps, false)
		got, _ := transcript(t, steps, true)
		require.Equal(t, want, got)
	})
}
